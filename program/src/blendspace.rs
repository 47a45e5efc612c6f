//! Blendspaces: the cook-time triangulation of a 2D sample set and the
//! run-time weights (1D interval, 2D barycentric, clamped to the boundary
//! outside). Weights are nonnegative and sum to one.
//!
//! The triangulation is Delaunay (no sample strictly inside a cell's
//! circumcircle), built by brute force (programs have a handful of
//! samples), with cocircular ties broken by taking candidate cells in
//! index order and skipping any that overlaps one already taken; the
//! result must cover the convex hull exactly or the set is refused.

use crate::plan::{orient, Blendspace};

/// Why a sample set cannot be triangulated.
#[derive(Clone, Debug, PartialEq)]
pub enum TriangulationError {
    Duplicate(usize, usize),
    Collinear,
    /// A cell thinner than the tolerance: its three samples.
    Degenerate([usize; 3]),
    /// The cells do not cover the hull (cannot happen for points in
    /// general position; reported rather than trusted).
    Incomplete,
}

/// Delaunay cells of `points`, counter-clockwise.
pub fn triangulate(points: &[[f32; 2]]) -> Result<Vec<[u16; 3]>, TriangulationError> {
    let n = points.len();
    for i in 0..n {
        for j in i + 1..n {
            if points[i] == points[j] {
                return Err(TriangulationError::Duplicate(i, j));
            }
        }
    }
    let (lo, hi) = points
        .iter()
        .fold(([f32::MAX; 2], [f32::MIN; 2]), |(lo, hi), p| {
            (
                [lo[0].min(p[0]), lo[1].min(p[1])],
                [hi[0].max(p[0]), hi[1].max(p[1])],
            )
        });
    let extent = f64::from(hi[0] - lo[0]).max(f64::from(hi[1] - lo[1]));
    let tol = 1e-6 * extent * extent;
    let mut cells: Vec<[usize; 3]> = Vec::new();
    let mut any_area = false;
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                let area = orient(points[i], points[j], points[k]);
                if area.abs() <= tol {
                    continue;
                }
                any_area = true;
                let t = if area > 0.0 { [i, j, k] } else { [i, k, j] };
                let empty = (0..n)
                    .filter(|l| !t.contains(l))
                    .all(|l| in_circle(points, t, points[l]) <= tol * extent * extent);
                if empty && !cells.iter().any(|c| overlaps(points, *c, t)) {
                    cells.push(t);
                }
            }
        }
    }
    if !any_area {
        return Err(TriangulationError::Collinear);
    }
    let area: f64 = cells
        .iter()
        .map(|t| orient(points[t[0]], points[t[1]], points[t[2]]))
        .sum();
    if (area - hull_area2(points)).abs() > 1e-6 * extent * extent.max(1.0) {
        return Err(TriangulationError::Incomplete);
    }
    for t in &cells {
        let [a, b, c] = t.map(|i| points[i]);
        // Thin cells: twice the area against the longest edge squared.
        let longest = [(a, b), (b, c), (c, a)]
            .iter()
            .map(|(p, q)| f64::from(p[0] - q[0]).powi(2) + f64::from(p[1] - q[1]).powi(2))
            .fold(0.0, f64::max);
        if orient(a, b, c) < 1e-3 * longest {
            return Err(TriangulationError::Degenerate(*t));
        }
    }
    Ok(cells.iter().map(|t| t.map(|i| i as u16)).collect())
}

/// Positive when `p` is strictly inside the circumcircle of the
/// counter-clockwise triangle `t`.
fn in_circle(points: &[[f32; 2]], t: [usize; 3], p: [f32; 2]) -> f64 {
    let r = |q: [f32; 2]| {
        let (x, y) = (f64::from(q[0] - p[0]), f64::from(q[1] - p[1]));
        (x, y, x * x + y * y)
    };
    let (ax, ay, a2) = r(points[t[0]]);
    let (bx, by, b2) = r(points[t[1]]);
    let (cx, cy, c2) = r(points[t[2]]);
    ax * (by * c2 - b2 * cy) - ay * (bx * c2 - b2 * cx) + a2 * (bx * cy - by * cx)
}

/// Whether two triangles' interiors intersect (separating axes over the
/// six edge normals; touching is not overlapping).
fn overlaps(points: &[[f32; 2]], a: [usize; 3], b: [usize; 3]) -> bool {
    let pa = a.map(|i| points[i]);
    let pb = b.map(|i| points[i]);
    for tri in [pa, pb] {
        for e in 0..3 {
            let (p, q) = (tri[e], tri[(e + 1) % 3]);
            let axis = (f64::from(q[1] - p[1]), -f64::from(q[0] - p[0]));
            let proj = |v: &[f32; 2]| axis.0 * f64::from(v[0]) + axis.1 * f64::from(v[1]);
            let (amin, amax) = pa
                .iter()
                .map(proj)
                .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
            let (bmin, bmax) = pb
                .iter()
                .map(proj)
                .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
            let eps = 1e-9 * (axis.0.abs() + axis.1.abs());
            if amax <= bmin + eps || bmax <= amin + eps {
                return false;
            }
        }
    }
    true
}

/// Twice the area of the convex hull (monotone chain).
fn hull_area2(points: &[[f32; 2]]) -> f64 {
    let mut p: Vec<[f32; 2]> = points.to_vec();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let mut hull: Vec<[f32; 2]> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &[f32; 2]>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for q in iter {
            while hull.len() >= start + 2
                && orient(hull[hull.len() - 2], hull[hull.len() - 1], *q) <= 0.0
            {
                hull.pop();
            }
            hull.push(*q);
        }
        hull.pop();
    }
    let n = hull.len();
    (0..n)
        .map(|i| {
            let (a, b) = (hull[i], hull[(i + 1) % n]);
            f64::from(a[0]) * f64::from(b[1]) - f64::from(b[0]) * f64::from(a[1])
        })
        .sum()
}

/// The weights of `space` at `(x, y)` into `out` (one per sample;
/// `out.len()` must equal the sample count). Nonnegative, summing to one;
/// inputs outside are clamped to the nearest boundary point. Never
/// allocates.
pub fn weights(space: &Blendspace, x: f32, y: f32, out: &mut [f32]) {
    out.iter_mut().for_each(|w| *w = 0.0);
    let p = &space.points;
    if p.is_empty() || out.len() != p.len() {
        return;
    }
    let x = if x.is_finite() { x } else { p[0][0] };
    let y = if y.is_finite() { y } else { p[0][1] };
    if space.triangles.is_empty() {
        let n = p.len();
        if x <= p[0][0] || n == 1 {
            out[0] = 1.0;
            return;
        }
        if x >= p[n - 1][0] {
            out[n - 1] = 1.0;
            return;
        }
        let i = p.partition_point(|q| q[0] <= x).clamp(1, n - 1) - 1;
        let t = (x - p[i][0]) / (p[i + 1][0] - p[i][0]);
        out[i] = 1.0 - t;
        out[i + 1] = t;
        return;
    }
    let q = [x, y];
    // Inside a cell: barycentric weights.
    for t in &space.triangles {
        let [a, b, c] = t.map(|i| p[usize::from(i)]);
        let area = orient(a, b, c);
        let wa = orient(q, b, c) / area;
        let wb = orient(a, q, c) / area;
        let wc = 1.0 - wa - wb;
        if wa >= -1e-6 && wb >= -1e-6 && wc >= -1e-6 {
            let (wa, wb, wc) = (wa.max(0.0), wb.max(0.0), wc.max(0.0));
            let s = wa + wb + wc;
            out[usize::from(t[0])] = (wa / s) as f32;
            out[usize::from(t[1])] = (wb / s) as f32;
            out[usize::from(t[2])] = (wc / s) as f32;
            return;
        }
    }
    // Outside: the nearest point on any cell edge.
    let mut best = (f64::MAX, 0usize, 0usize, 0.0f64);
    for t in &space.triangles {
        for e in 0..3 {
            let (i, j) = (usize::from(t[e]), usize::from(t[(e + 1) % 3]));
            let (a, b) = (p[i], p[j]);
            let (dx, dy) = (f64::from(b[0] - a[0]), f64::from(b[1] - a[1]));
            let len2 = dx * dx + dy * dy;
            let s = if len2 > 0.0 {
                ((f64::from(x - a[0]) * dx + f64::from(y - a[1]) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (cx, cy) = (f64::from(a[0]) + s * dx, f64::from(a[1]) + s * dy);
            let d = (cx - f64::from(x)).powi(2) + (cy - f64::from(y)).powi(2);
            if d < best.0 {
                best = (d, i, j, s);
            }
        }
    }
    out[best.1] = (1.0 - best.3) as f32;
    out[best.2] += best.3 as f32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(points: Vec<[f32; 2]>) -> Blendspace {
        let triangles = triangulate(&points).unwrap();
        Blendspace {
            name: "s".into(),
            params: vec![0, 1],
            points,
            triangles,
            sync: None,
            members: vec![],
        }
    }

    #[test]
    fn a_square_with_a_center_gives_four_cells() {
        let s = space(vec![
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0],
            [0.5, 0.5],
        ]);
        assert_eq!(s.triangles.len(), 4);
    }

    #[test]
    fn a_cocircular_square_gives_two_cells() {
        let s = space(vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]);
        assert_eq!(s.triangles.len(), 2);
        let mut w = [0.0; 4];
        for (x, y) in [(0.3, 0.7), (2.0, -1.0), (-5.0, 0.5), (0.5, 0.5)] {
            weights(&s, x, y, &mut w);
            assert!(
                w.iter().all(|v| *v >= 0.0) && (w.iter().sum::<f32>() - 1.0).abs() < 1e-5,
                "{w:?}"
            );
        }
        weights(&s, 1.0, 1.0, &mut w);
        assert!((w[2] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn degenerate_sets_are_refused() {
        assert_eq!(
            triangulate(&[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]),
            Err(TriangulationError::Collinear)
        );
        assert!(matches!(
            triangulate(&[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]),
            Err(TriangulationError::Duplicate(0, 1))
        ));
        assert!(matches!(
            triangulate(&[[0.0, 0.0], [10.0, 0.0], [5.0, 0.001]]),
            Err(TriangulationError::Degenerate(_))
        ));
    }
}
