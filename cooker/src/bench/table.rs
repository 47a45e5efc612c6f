//! The decode table of `ludus-anim bench`: per clip, ours by ACL's method
//! (whole pose through a player and one-shot, one joint first / middle /
//! last, a 10-joint subset, the pose joint by joint) and after a strict
//! flush. Ours alone: ACL's figures count only when ACL ran beside ours in
//! the same run (`tools/acl-harness`), which this command does not do, so
//! it prints no ACL figure and no ratio.

use super::BenchRow;
use std::fmt::Write;

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
    let _ = writeln!(
        s,
        "decode, ns per call (ACL's method; strict = after a 128 MiB read-modify-write):"
    );
    let _ = writeln!(
        s,
        "{:<44} {:>6} {:>7} {:>8} {:>6} {:>6} {:>6} {:>6} {:>8} {:>7} {:>7}",
        "clip",
        "joints",
        "pose",
        "one-shot",
        "first",
        "mid",
        "last",
        "sub10",
        "by-joint",
        "strict",
        "strict1"
    );
    for x in rows {
        let d = &x.decode;
        let _ = writeln!(
            s,
            "{:<44} {:>6} {:>7.0} {:>8.0} {:>6.0} {:>6.0} {:>6.0} {:>6.0} {:>8.0} {:>7.0} {:>7.0}",
            decode_row_name(x, rows),
            x.joints,
            d.pose_ns,
            d.oneshot_pose_ns,
            d.first_joint_ns,
            d.middle_joint_ns,
            d.last_joint_ns,
            d.subset10_ns,
            d.joint_by_joint_ns,
            d.strict_pose_ns,
            d.strict_last_joint_ns,
        );
    }
    let _ = writeln!(s, "  {}", super::conditions::ACL_BASIS);
    s
}
