mod common;

use ludus_anim_dashboard::{run, ReportArgs};

#[test]
fn smoke_fixture_page() {
    let Some(f) = common::fixtures::fixture_cooks() else {
        return;
    };
    let html = f.dir.path().join("report.html");
    let out = run(&ReportArgs {
        outs: vec![f.standard.clone(), f.hero.clone(), f.crowd.clone()],
        baseline: Some(f.baseline.clone()),
        html: Some(html.clone()),
        ..Default::default()
    })
    .unwrap();
    println!("{}", out.stdout);
    std::fs::copy(&html, "/tmp/dash-smoke.html").unwrap();
}
