//! `ludus-anim program compile|dump|verify|evaluate`: animation programs
//! (`ludus-anim-program`, `ludus-anim-program-eval`) against a cook
//! output. `compile` resolves the program's clips through
//! `OUT/manifest.json` and the packages it names, compiles, verifies the
//! compiled program over the built-in scripted input sequence and only
//! then writes `OUT/programs/<name>.ludprog` (atomically). `inspect --plan
//! FILE` is `program dump FILE`.

use super::output::{outln, Output};
use super::program_view::{build_view, ViewInputs};
use super::Exit;
use clap::{Args, Subcommand};
use ludus_anim_cooker::fsutil::write_atomic;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_program::compile::{AssetFacts, ClipFacts};
use ludus_anim_program::plan::{ParamKind, Program};
use ludus_anim_program::{asset, binary, compile, dump};
use ludus_anim_program_eval::verify::{default_script, verify, Step, Verification};
use ludus_anim_program_eval::Evaluator;
use ludus_anim_runtime::package::Package;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ProgramArgs {
    #[command(subcommand)]
    command: ProgramCommand,
}

#[derive(Subcommand)]
enum ProgramCommand {
    /// Compile a program asset (TOML) against a cook output, verify it,
    /// and write OUT/programs/<name>.ludprog (or -o FILE).
    Compile(CompileArgs),
    /// Print a program's plan: ops with guards, operands and authored
    /// nodes, then its capacities (a .ludprog, or a .toml compiled first).
    Dump(FileArgs),
    /// Load a compiled program, bind it to the cook output's packages and
    /// run the verification (scripted inputs, capacities, finite unit
    /// outputs, determinism).
    Verify(VerifyArgs),
    /// Evaluate a compiled program over an input script and print the
    /// states and joint positions tick by tick.
    Evaluate(EvaluateArgs),
}

#[derive(Args)]
struct CookOut {
    /// The cook output holding manifest.json and packages/ (default: `out`
    /// beside the program asset, or the directory holding programs/).
    #[arg(long)]
    cook_out: Option<PathBuf>,
}

#[derive(Args)]
struct CompileArgs {
    program: PathBuf,
    #[command(flatten)]
    cook: CookOut,
    /// Where to write the compiled program.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Print the plan after compiling.
    #[arg(long)]
    dump: bool,
    /// Input script (as `evaluate --script`) of the evaluated sequence the
    /// dashboard shows (`<name>.view.json` beside the compiled program);
    /// default: the verification's script, 10 s at 30 Hz.
    #[arg(long)]
    script: Option<PathBuf>,
}

#[derive(Args)]
pub struct FileArgs {
    file: PathBuf,
    #[command(flatten)]
    cook: CookOut,
}

#[derive(Args)]
struct VerifyArgs {
    file: PathBuf,
    #[command(flatten)]
    cook: CookOut,
    /// Seconds of scripted input.
    #[arg(long, default_value_t = 20.0)]
    seconds: f32,
}

#[derive(Args)]
struct EvaluateArgs {
    file: PathBuf,
    #[command(flatten)]
    cook: CookOut,
    /// Input script (TOML: `dt`, then `[[step]]` tables with `seconds`
    /// and parameter values); default: the verification's script.
    #[arg(long)]
    script: Option<PathBuf>,
    /// Print every Nth tick.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Joints whose component-space positions are printed.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "Hips,Head,LeftHand,RightHand,LeftFoot,RightFoot"
    )]
    joints: Vec<String>,
    /// One JSON object per printed tick.
    #[arg(long)]
    json: bool,
    /// Also write the printed ticks as a stick-figure strip (side view,
    /// one figure per printed tick, labelled with its state) to this SVG.
    #[arg(long)]
    svg: Option<PathBuf>,
}

pub fn run(a: ProgramArgs, out: &Output) -> Exit {
    let r = match a.command {
        ProgramCommand::Compile(c) => compile_cmd(c),
        ProgramCommand::Dump(d) => dump_cmd(&d.file, d.cook.cook_out.as_deref()),
        ProgramCommand::Verify(v) => verify_cmd(v),
        ProgramCommand::Evaluate(e) => evaluate_cmd(e),
    };
    match r {
        Ok(e) => e,
        Err(message) => {
            out.error(message);
            Exit::AssetsFailed
        }
    }
}

/// `inspect --plan FILE`.
pub fn dump_file(file: &Path, out: &Output) -> Exit {
    match dump_cmd(file, None) {
        Ok(e) => e,
        Err(m) => {
            out.error(m);
            Exit::AssetsFailed
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The cook output: given, else `out` beside a .toml, else the parent of
/// a `programs/` directory holding a .ludprog, else `./out`.
fn cook_dir(given: Option<&Path>, file: &Path) -> PathBuf {
    if let Some(g) = given {
        return g.to_path_buf();
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if file.extension().is_some_and(|e| e == "toml") {
        return dir.join("out");
    }
    if dir.file_name().is_some_and(|n| n == "programs") {
        return dir.parent().unwrap_or(Path::new(".")).to_path_buf();
    }
    PathBuf::from("out")
}

/// Every package of the cook output: (package path as the manifest
/// records it, bytes).
fn packages(cook: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mpath = cook.join("manifest.json");
    let text = std::fs::read_to_string(&mpath)
        .map_err(|e| format!("{}: {e} (cook the clips first)", mpath.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", mpath.display()))?;
    let mut out = Vec::new();
    for a in v["assets"].as_array().into_iter().flatten() {
        let Some(rel) = a["package"].as_str() else {
            continue;
        };
        if rel.contains("..") || Path::new(rel).is_absolute() {
            return Err(format!(
                "{}: package path '{rel}' leaves the output",
                mpath.display()
            ));
        }
        out.push((rel.to_string(), read(&cook.join(rel))?));
    }
    Ok(out)
}

/// `packages/<asset>-<16 hex>.ludanim` → `<asset>`.
fn asset_name(rel: &str) -> &str {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let stem = file.strip_suffix(".ludanim").unwrap_or(file);
    match stem.rsplit_once('-') {
        Some((a, h)) if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()) => a,
        _ => stem,
    }
}

fn load_all(raw: &[(String, Vec<u8>)]) -> Result<Vec<(String, Package<'_>)>, String> {
    raw.iter()
        .map(|(n, b)| {
            Package::load(b)
                .map(|p| (n.clone(), p))
                .map_err(|e| format!("{n}: {e}"))
        })
        .collect()
}

fn facts(pk: &[(String, Package<'_>)]) -> Vec<AssetFacts> {
    pk.iter()
        .map(|(rel, p)| {
            let s = p.skeleton();
            AssetFacts {
                asset: asset_name(rel).to_string(),
                package: rel.clone(),
                skeleton_identity: s.identity().0,
                joint_names: s.names().to_vec(),
                parents: s.parents().to_vec(),
                clips: p
                    .clips()
                    .iter()
                    .map(|c| {
                        let mut sync_markers: Vec<(String, f32)> = c
                            .markers()
                            .iter()
                            .filter(|m| m.kind == MarkerKind::SyncMarker)
                            .map(|m| (m.name.to_string(), m.event.time_s))
                            .collect();
                        sync_markers.sort_by(|a, b| a.1.total_cmp(&b.1));
                        ClipFacts {
                            name: c.name().to_string(),
                            duration_s: c.duration_s(),
                            looping: c.loop_mode().is_looping(),
                            additive: c.is_additive(),
                            sync_markers,
                            marker_count: c.markers().len(),
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

fn compile_file(file: &Path, cook: &Path, pk: &[(String, Package<'_>)]) -> Result<Program, String> {
    let text =
        String::from_utf8(read(file)?).map_err(|_| format!("{}: not UTF-8", file.display()))?;
    let name = file.display().to_string();
    let parsed = asset::parse(&text, &name).map_err(|e| e.to_string())?;
    let _ = cook;
    compile::compile(&parsed, &text, &name, &facts(pk)).map_err(|e| e.to_string())
}

fn verification_line(v: &Verification) -> String {
    format!(
        "verified: {} ticks ({:.1} s), {} transitions, players {} of {}, events per tick {} of {}, rotation norm error {:.1e}, {} blend fallbacks, deterministic (pose hash {:016x})",
        v.ticks,
        v.seconds,
        v.transitions.len(),
        v.max_players,
        v.capacity_players,
        v.max_events,
        v.capacity_events,
        v.max_rotation_norm_error,
        v.blend_fallbacks,
        v.pose_hash
    )
}

fn compile_cmd(a: CompileArgs) -> Result<Exit, String> {
    let cook = cook_dir(a.cook.cook_out.as_deref(), &a.program);
    let raw = packages(&cook)?;
    let pk = load_all(&raw)?;
    let program = compile_file(&a.program, &cook, &pk)?;
    let script = default_script(&program, 20.0, 1.0 / 30.0);
    let v = verify(&program, &pk, &script)
        .map_err(|e| format!("{}: verification failed: {e}", a.program.display()))?;
    let bytes = binary::encode(&program);
    let target = a.out.unwrap_or_else(|| {
        cook.join("programs")
            .join(format!("{}.ludprog", program.name))
    });
    if let Some(d) = target.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    // The view is assembled (and its script read) before anything is
    // written: a bad script leaves neither file behind.
    let (script_name, view_script) = match &a.script {
        Some(s) => (
            s.file_name().map_or_else(
                || s.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            read_script(s, &program)?,
        ),
        None => {
            let dt = 1.0 / 30.0;
            let mut steps = default_script(&program, 10.0, dt);
            for s in &mut steps {
                s.dt = dt;
            }
            ("the verification's script".to_string(), steps)
        }
    };
    let file_name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let view = build_view(
        &program,
        &pk,
        ViewInputs {
            file: file_name,
            file_bytes: bytes.len() as u64,
            dump: dump::dump(&program),
            verification: verification_line(&v),
            script_name,
            script: &view_script,
        },
    )
    .map_err(|e| format!("{}: {e}", a.program.display()))?;
    let view_json = serde_json::to_string_pretty(&view).map_err(|e| e.to_string())? + "\n";
    let view_path = target.with_extension("view.json");
    write_atomic(&target, &bytes).map_err(|e| format!("{}: {e}", target.display()))?;
    write_atomic(&view_path, view_json.as_bytes())
        .map_err(|e| format!("{}: {e}", view_path.display()))?;
    if a.dump {
        outln!("{}", dump::dump(&program));
    }
    outln!("{}", verification_line(&v));
    outln!(
        "wrote {} ({} bytes, {} ops) and its dashboard view {}",
        target.display(),
        bytes.len(),
        program.ops.len(),
        view_path.display()
    );
    Ok(Exit::Ok)
}

fn load_program(file: &Path, cook: &Path) -> Result<Program, String> {
    if file.extension().is_some_and(|e| e == "toml") {
        let raw = packages(cook)?;
        let pk = load_all(&raw)?;
        return compile_file(file, cook, &pk);
    }
    binary::load(&read(file)?).map_err(|e| format!("{}: {e}", file.display()))
}

fn dump_cmd(file: &Path, cook: Option<&Path>) -> Result<Exit, String> {
    let p = load_program(file, &cook_dir(cook, file))?;
    outln!("{}", dump::dump(&p).trim_end());
    Ok(Exit::Ok)
}

fn verify_cmd(a: VerifyArgs) -> Result<Exit, String> {
    let cook = cook_dir(a.cook.cook_out.as_deref(), &a.file);
    let p = load_program(&a.file, &cook)?;
    let raw = packages(&cook)?;
    let pk = load_all(&raw)?;
    if !(a.seconds.is_finite() && a.seconds > 0.0 && a.seconds <= 3600.0) {
        return Err(format!("--seconds {} is outside (0, 3600]", a.seconds));
    }
    let script = default_script(&p, a.seconds, 1.0 / 30.0);
    let v = verify(&p, &pk, &script)
        .map_err(|e| format!("{}: verification failed: {e}", a.file.display()))?;
    outln!("{}", verification_line(&v));
    Ok(Exit::Ok)
}

/// An input script: `dt`, then steps holding parameter values for
/// `seconds`; unnamed parameters keep their value (first: the default).
fn read_script(path: &Path, p: &Program) -> Result<Vec<Step>, String> {
    let at = |m: String| format!("{}: {m}", path.display());
    let text = String::from_utf8(read(path)?).map_err(|_| at("not UTF-8".into()))?;
    let v: toml::Table = toml::from_str(&text).map_err(|e| at(e.to_string()))?;
    let dt = v.get("dt").and_then(|d| d.as_float()).unwrap_or(1.0 / 30.0) as f32;
    if !(dt > 0.0 && dt <= p.capacities.max_tick_s) {
        return Err(at(format!(
            "dt {dt} is outside (0, max_tick_s {}]",
            p.capacities.max_tick_s
        )));
    }
    let mut values: Vec<f32> = p.params.iter().map(|q| q.kind.default_value()).collect();
    let mut out = Vec::new();
    for (i, s) in v
        .get("step")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(t) = s.as_table() else {
            return Err(at(format!("step {i} is not a table")));
        };
        let seconds = t
            .get("seconds")
            .and_then(|x| x.as_float().or(x.as_integer().map(|i| i as f64)))
            .unwrap_or(1.0);
        if !(seconds > 0.0 && seconds <= 3600.0) {
            return Err(at(format!(
                "step {i}: seconds {seconds} is outside (0, 3600]"
            )));
        }
        for (k, x) in t.iter().filter(|(k, _)| *k != "seconds") {
            let Some(pi) = p.params.iter().position(|q| q.name == *k) else {
                let hint = ludus_anim_program::located::did_you_mean(
                    k,
                    p.params.iter().map(|q| q.name.as_str()),
                );
                return Err(at(format!(
                    "step {i}: no parameter '{k}'{}",
                    hint.map_or(String::new(), |h| format!(" (did you mean '{h}'?)"))
                )));
            };
            values[pi] = match (&p.params[pi].kind, x) {
                (ParamKind::Float { .. }, toml::Value::Float(f)) => *f as f32,
                (ParamKind::Float { .. }, toml::Value::Integer(n)) => *n as f32,
                (ParamKind::Bool { .. }, toml::Value::Boolean(b)) => f32::from(u8::from(*b)),
                (ParamKind::Enum { values: vs, .. }, toml::Value::String(s)) => {
                    match vs.iter().position(|v| v == s) {
                        Some(e) => e as f32,
                        None => {
                            return Err(at(format!(
                                "step {i}: '{s}' is not a value of '{k}' ({})",
                                vs.join(", ")
                            )))
                        }
                    }
                }
                _ => return Err(at(format!("step {i}: '{k}' has the wrong type"))),
            };
        }
        let ticks = (seconds as f32 / dt).round().max(1.0) as usize;
        out.extend((0..ticks).map(|_| Step {
            dt,
            inputs: values.clone(),
        }));
    }
    if out.is_empty() {
        return Err(at("no [[step]]".into()));
    }
    Ok(out)
}

fn evaluate_cmd(a: EvaluateArgs) -> Result<Exit, String> {
    let cook = cook_dir(a.cook.cook_out.as_deref(), &a.file);
    let p = load_program(&a.file, &cook)?;
    let raw = packages(&cook)?;
    let pk = load_all(&raw)?;
    let script = match &a.script {
        Some(s) => read_script(s, &p)?,
        None => default_script(&p, 10.0, 1.0 / 30.0),
    };
    let mut joints = Vec::new();
    for j in &a.joints {
        match p.joint_names.iter().position(|n| n == j) {
            Some(i) => joints.push(i),
            None => {
                let hint = ludus_anim_program::located::did_you_mean(
                    j,
                    p.joint_names.iter().map(String::as_str),
                );
                return Err(format!(
                    "no joint '{j}'{}",
                    hint.map_or(String::new(), |h| format!(" (did you mean '{h}'?)"))
                ));
            }
        }
    }
    let mut ev = Evaluator::new(&p, &pk).map_err(|e| e.to_string())?;
    let mut figures: Vec<(String, Vec<[f32; 3]>)> = Vec::new();
    let mut t = 0f64;
    for (k, s) in script.iter().enumerate() {
        let r = ev
            .tick(&s.inputs, s.dt)
            .map_err(|e| format!("tick {k}: {e}"))?;
        ev.evaluate().map_err(|e| format!("tick {k}: {e}"))?;
        t += f64::from(s.dt);
        if k % a.every.max(1) != 0 && r.transition.is_none() {
            continue;
        }
        let state = p
            .machines
            .first()
            .and_then(|m| {
                ev.active_leaf(0)
                    .map(|l| m.states[usize::from(l)].name.as_str())
            })
            .unwrap_or("-");
        let fade = ev.fade(0);
        let pos: Vec<[f32; 3]> = joints
            .iter()
            .map(|&j| ev.component_pose()[j].translation.to_array())
            .collect();
        if a.svg.is_some() {
            let all = ev
                .component_pose()
                .iter()
                .map(|m| m.translation.to_array())
                .collect();
            figures.push((format!("{t:.2} s {state}"), all));
        }
        if a.json {
            let v = serde_json::json!({
                "tick": k, "t": t, "inputs": s.inputs, "state": state, "fade": fade,
                "transition": r.transition, "players": r.players, "events": r.events,
                "joints": a.joints.iter().zip(&pos).map(|(n, p)| (n.clone(), serde_json::json!(p.to_vec()))).collect::<serde_json::Map<_, _>>(),
            });
            outln!("{v}");
        } else {
            let pos: Vec<String> = a
                .joints
                .iter()
                .zip(&pos)
                .map(|(n, p)| format!("{n}=({:.3},{:.3},{:.3})", p[0], p[1], p[2]))
                .collect();
            let tr = r
                .transition
                .map_or(String::new(), |id| format!(" transition #{id}"));
            let fade = fade.map_or(String::new(), |f| format!(" fade {f:.2}"));
            outln!(
                "{k:>4} t={t:.3} {state}{fade}{tr} players {} events {} {}",
                r.players,
                r.events,
                pos.join(" ")
            );
        }
    }
    if let Some(path) = &a.svg {
        write_atomic(path, stick_figures(&p.parents, &figures).as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(Exit::Ok)
}

/// Side view (+Z to the right, +Y up), one figure per entry, 0.9 m apart,
/// 200 px per meter; each bone a line from the parent's origin.
fn stick_figures(parents: &[u32], figures: &[(String, Vec<[f32; 3]>)]) -> String {
    use std::fmt::Write;
    let (scale, step, height) = (200.0f32, 0.9f32, 2.0f32);
    let width = (figures.len().max(1) as f32 * step * scale).ceil();
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"14\">\n",
        (height * scale + 30.0).ceil()
    );
    for (i, (label, pose)) in figures.iter().enumerate() {
        let x0 = (i as f32 + 0.5) * step * scale;
        let at = |p: &[f32; 3]| (x0 + p[2] * scale, height * scale - p[1] * scale);
        let _ = write!(s, "<g stroke=\"#334\" stroke-width=\"3\">");
        for (j, &parent) in parents.iter().enumerate() {
            if let (Some(c), Some(q)) = (pose.get(j), pose.get(parent as usize)) {
                let ((x1, y1), (x2, y2)) = (at(q), at(c));
                let _ = write!(
                    s,
                    "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\"/>"
                );
            }
        }
        let _ = writeln!(
            s,
            "</g><text x=\"{x0:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
            height * scale + 20.0
        );
    }
    s.push_str("</svg>\n");
    s
}
