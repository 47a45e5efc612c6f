//! Number formatting shared by the text and HTML renderers.

/// Meters as millimetres with four decimals (`0.0999 mm`).
pub fn mm(m: f32) -> String {
    if m.is_finite() {
        format!("{:.4} mm", m * 1000.0)
    } else {
        "inf".to_string()
    }
}

/// A fraction as a percentage (`99.9%`).
pub fn pct(r: f32) -> String {
    if r.is_finite() {
        format!("{:.1}%", r * 100.0)
    } else {
        "inf".to_string()
    }
}

/// An integer with thin thousands separators (`10 547 160`).
pub fn int(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Max error over threshold (0 for a zero threshold and error).
pub fn ratio(error_m: f32, threshold_m: f32) -> f32 {
    if threshold_m > 0.0 {
        error_m / threshold_m
    } else if error_m > 0.0 {
        f32::INFINITY
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats() {
        assert_eq!(super::int(10547160), "10 547 160");
        assert_eq!(super::int(999), "999");
        assert_eq!(super::mm(9.99e-5), "0.0999 mm");
        assert_eq!(super::pct(0.999), "99.9%");
    }
}
