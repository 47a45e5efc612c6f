//! Building a [`Dashboard`]: the cooks merged and compared with the
//! baseline (`model`), then the threshold gate over their rows (`gate`).
//! Kept apart so `gate` can read `model`'s rows without `model` calling
//! back into `gate`.

use crate::gate::over_threshold;
use crate::input::Cook;
use crate::model::Dashboard;
use ludus_anim_report::rules::RegressionRules;

impl Dashboard {
    /// Merge `cooks` (the current results), compare with `baseline`, and
    /// gate every clip over its threshold.
    pub fn new(cooks: Vec<Cook>, baseline: Option<Cook>, rules: RegressionRules) -> Dashboard {
        let mut d = Dashboard::assemble(cooks, baseline, rules);
        d.gate = over_threshold(&d.rows(), &d.rules);
        d
    }
}
