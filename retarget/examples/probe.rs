use ludus_anim_cooker::stages::normalize::normalize;
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_runtime::Affine3A;
fn main() {
    for (p, u) in std::env::args().skip(1).map(|a| {
        let mut s = a.split('@');
        (
            s.next().unwrap().to_string(),
            s.next().map(|u| u.parse::<f32>().unwrap()),
        )
    }) {
        let a = import_file(std::path::Path::new(&p), &ImportOptions::default()).unwrap();
        let n = normalize(&a, u).unwrap();
        let s = &n.skeleton;
        let mut c = vec![Affine3A::IDENTITY; s.joint_count()];
        s.local_to_component(s.rest_pose(), &mut c);
        println!(
            "== {p} unit {} joints {} clips {}",
            n.unit_scale_m,
            s.joint_count(),
            n.clips.len()
        );
        for cl in &n.clips {
            println!(
                "clip {} dur {} keys {} tracks {}",
                cl.name,
                cl.duration_s,
                cl.key_times.len(),
                cl.tracks.len()
            );
        }
        for j in 0..s.joint_count() {
            let r = s.rest_pose()[j];
            println!(
                "{j:3} {:28} p={:3?} pos={:.3?} s={:.3?}",
                s.name(j),
                s.parent(j),
                c[j].translation,
                r.scale
            );
        }
    }
}
