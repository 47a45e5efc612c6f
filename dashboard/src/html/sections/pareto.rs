//! The Pareto view across profiles: per profile, the clips every profile
//! cooked, summed bytes, mean decode time (of the clips this cook timed)
//! and the largest error at any clip's worst joint; a profile is on the
//! front when no other profile is at least as good on all three and
//! better on one. Contacts and sockets are not cooked yet, so they are
//! not a column.

use super::{num, thead, txt};
use crate::fmt::{int, mm};
use std::fmt::Write;

/// One profile's figures: (name, bytes, mean decode ns, max error m).
pub type Figures = (String, u64, f64, f32);

fn no_worse(a: &Figures, b: &Figures) -> bool {
    a.1 <= b.1 && a.2 <= b.2 && a.3 <= b.3
}

fn better(a: &Figures, b: &Figures) -> bool {
    a.1 < b.1 || a.2 < b.2 || a.3 < b.3
}

/// For each profile, `None` when it is on the front, else the index of a
/// profile that dominates it.
pub fn front(profiles: &[Figures]) -> Vec<Option<usize>> {
    profiles
        .iter()
        .map(|p| profiles.iter().position(|q| no_worse(q, p) && better(q, p)))
        .collect()
}

pub fn render(s: &mut String, profiles: &[Figures]) {
    s.push_str(
        "<h3>Pareto view across profiles</h3><p class=\"muted\">Bytes, decode time and error at the \
         worst joint over the clips every profile cooked; decode time is the mean of the clips this \
         cook timed (0: all served from the cache).</p><div class=\"scroll\"><table class=\"sortable\" id=\"pareto\">",
    );
    thead(
        s,
        &[
            ("profile", false),
            ("bytes", true),
            ("mean decode ns", true),
            ("max error (worst joint)", true),
            ("front", false),
        ],
    );
    s.push_str("<tbody>");
    for (p, dominated) in profiles.iter().zip(front(profiles)) {
        s.push_str("<tr>");
        txt(s, &p.0);
        num(s, p.1 as f64, &int(p.1));
        num(s, p.2, &format!("{:.0}", p.2));
        num(s, p.3.into(), &mm(p.3));
        let verdict = match dominated.and_then(|i| profiles.get(i)) {
            None => "on the front".to_string(),
            Some(q) => format!("dominated by {}", q.0),
        };
        txt(s, &verdict);
        s.push_str("</tr>");
    }
    let _ = write!(s, "</tbody></table></div>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, bytes: u64, ns: f64, err: f32) -> Figures {
        (name.into(), bytes, ns, err)
    }

    #[test]
    fn a_profile_worse_on_every_axis_is_dominated() {
        let p = [
            f("standard", 100, 50.0, 1e-4),
            f("hero", 200, 60.0, 2.5e-5),
            f("bloated", 300, 70.0, 1e-4),
            f("twin", 100, 50.0, 1e-4),
        ];
        assert_eq!(front(&p), vec![None, None, Some(0), None]);
    }
}
