//! The decode table of `ludus-anim bench`: per clip, ours by ACL's method
//! (whole pose packed, static and static through a track cache, one joint first / middle / last, a 10-joint subset, the
//! pose joint by joint) and after a strict flush, with ACL's figures and
//! our ratio to them where the anchors have them, then the geometric means.

use super::BenchRow;
use std::fmt::Write;

fn ratio(ours: f64, acl: Option<f64>) -> String {
    match acl {
        Some(a) if a > 0.0 => format!("{:.2}x", ours / a),
        _ => "-".into(),
    }
}

fn ns(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

/// Geometric mean of `ours / acl` over the rows with both.
fn geomean(pairs: impl Iterator<Item = (f64, Option<f64>)>) -> Option<(f64, usize)> {
    let logs: Vec<f64> = pairs
        .filter_map(|(o, a)| a.filter(|&a| a > 0.0 && o > 0.0).map(|a| (o / a).ln()))
        .collect();
    (!logs.is_empty()).then(|| {
        (
            (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
            logs.len(),
        )
    })
}

/// A decode row's name: the asset, and the clip too where the asset (a
/// package of several clips) has more than one row; at most 44 characters.
fn decode_row_name(x: &BenchRow, rows: &[BenchRow]) -> String {
    let asset = x.asset.trim_end_matches(".acl.sjson");
    let shared = rows.iter().filter(|r| r.asset == x.asset).count() > 1;
    let name = if shared {
        format!("{asset}:{}", x.clip)
    } else {
        asset.to_string()
    };
    if name.chars().count() <= 44 {
        return name;
    }
    // Keep the end, where the clip name is.
    let skip = name.chars().count() - 43;
    format!("~{}", name.chars().skip(skip).collect::<String>())
}

/// The table (empty when there are no rows).
pub fn render_decode(rows: &[BenchRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let level = rows.first().map_or("", |x| x.decode.isa);
    let _ = writeln!(
        s,
        "decode, ns per call (ACL's method; strict = after a 128 MiB read-modify-write; poses at {level}, joints at sse2):"
    );
    let _ = writeln!(
        s,
        "{:<44} {:>6} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8} {:>7} {:>7}",
        "clip", "joints", "pose", "static", "cached", "ACL", "ratio", "first", "mid", "ACL", "last", "ACL",
        "ratio", "sub10", "by-joint", "strict", "strict1"
    );
    for x in rows {
        let d = &x.decode;
        let a = x.acl_decode;
        let name = decode_row_name(x, rows);
        let _ = writeln!(
            s,
            "{:<44} {:>6} {:>7.0} {:>7.0} {:>7.0} {:>7} {:>6} {:>6.0} {:>6.0} {:>6} {:>6.0} {:>6} {:>6} {:>6.0} {:>8.0} {:>7.0} {:>7.0}",
            name,
            x.joints,
            d.pose_ns,
            d.static_pose_ns,
            d.cached_pose_ns,
            ns(a.map(|a| a.pose_ns)),
            ratio(d.pose_ns, a.map(|a| a.pose_ns)),
            d.first_joint_ns,
            d.middle_joint_ns,
            ns(a.and_then(|a| a.middle_joint_ns)),
            d.last_joint_ns,
            ns(a.and_then(|a| a.last_joint_ns)),
            ratio(d.last_joint_ns, a.and_then(|a| a.last_joint_ns)),
            d.subset10_ns,
            d.joint_by_joint_ns,
            d.strict_pose_ns,
            d.strict_last_joint_ns,
        );
    }
    let means = [
        (
            "whole pose (static, track cache)",
            geomean(
                rows.iter()
                    .map(|x| (x.decode.cached_pose_ns, x.acl_decode.map(|a| a.pose_ns))),
            ),
        ),
        (
            "whole pose (static)",
            geomean(
                rows.iter()
                    .map(|x| (x.decode.static_pose_ns, x.acl_decode.map(|a| a.pose_ns))),
            ),
        ),
        (
            "whole pose",
            geomean(
                rows.iter()
                    .map(|x| (x.decode.pose_ns, x.acl_decode.map(|a| a.pose_ns))),
            ),
        ),
        (
            "middle joint",
            geomean(rows.iter().map(|x| {
                (
                    x.decode.middle_joint_ns,
                    x.acl_decode.and_then(|a| a.middle_joint_ns),
                )
            })),
        ),
        (
            "last joint",
            geomean(rows.iter().map(|x| {
                (
                    x.decode.last_joint_ns,
                    x.acl_decode.and_then(|a| a.last_joint_ns),
                )
            })),
        ),
    ];
    let mut any = false;
    for (what, m) in means {
        if let Some((g, n)) = m {
            any = true;
            let _ = writeln!(s, "  {what}: geomean {g:.3}x ACL over {n} anchor clips");
        }
    }
    if any {
        let _ = writeln!(s, "  ACL's figures are {}", super::conditions::ACL_BASIS);
    }
    s
}
