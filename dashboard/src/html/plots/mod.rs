//! Hand-written SVG plots. No plotting crate: each plot is a few dozen
//! lines of `write!`, the output is small and deterministic, and nothing
//! can reference a font, image or script by URL.

pub mod bars;
pub mod heat;
pub mod line;
pub mod scatter;
pub mod timeline;
pub mod traj;

/// Reduce `(x, y)` points to at most `buckets` by keeping the largest `y`
/// of each equal-width `x` bucket (at its own `x`): peaks survive, so an
/// error plot never hides its worst moment.
pub fn max_pool(points: &[(f32, f32)], buckets: usize) -> Vec<(f32, f32)> {
    if points.len() <= buckets || buckets == 0 {
        return points.to_vec();
    }
    let (x0, x1) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => return Vec::new(),
    };
    let width = (x1 - x0).max(f32::MIN_POSITIVE);
    let mut out: Vec<(f32, f32)> = Vec::with_capacity(buckets);
    let mut current: Option<(usize, (f32, f32))> = None;
    for &(x, y) in points {
        let b = (((x - x0) / width) * buckets as f32)
            .floor()
            .min(buckets as f32 - 1.0) as usize;
        match current {
            Some((cb, best)) if cb == b => {
                if y > best.1 {
                    current = Some((b, (x, y)));
                }
            }
            Some((_, best)) => {
                out.push(best);
                current = Some((b, (x, y)));
            }
            None => current = Some((b, (x, y))),
        }
    }
    out.extend(current.map(|(_, p)| p));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn max_pool_keeps_peaks() {
        let pts: Vec<(f32, f32)> = (0..100)
            .map(|i| (i as f32, if i == 37 { 9.0 } else { 1.0 }))
            .collect();
        let p = super::max_pool(&pts, 10);
        assert_eq!(p.len(), 10);
        assert!(p.contains(&(37.0, 9.0)));
    }
}
