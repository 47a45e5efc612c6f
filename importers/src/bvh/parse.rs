//! BVH text to a plain description: the node tree as written, the frame
//! header and the motion values. No model types here; `bvh.rs` maps this to
//! a [`SourceAsset`](ludus_anim_model::SourceAsset).
//!
//! The parser is hand written over `&str` (no regex, no recursion): the
//! hierarchy is split into whitespace-separated tokens that remember their
//! line, and the motion section is read line by line, because a BVH frame is
//! exactly one line. Every failure is a [`BvhError`] naming the line and,
//! where there is one, the joint.

use ludus_anim_model::limits::{Limit, LimitExceeded, Limits, LIMIT_CODE};
use std::fmt;

/// One of the six BVH channel kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Position(Axis),
    Rotation(Axis),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Channel {
    /// Parse a channel name. Case-insensitive: exporters disagree on case
    /// (`Xrotation`, `XROTATION`) but never on meaning.
    fn parse(s: &str) -> Option<Channel> {
        let lower = s.to_ascii_lowercase();
        let (axis, kind) = lower.split_at_checked(1)?;
        let axis = match axis {
            "x" => Axis::X,
            "y" => Axis::Y,
            "z" => Axis::Z,
            _ => return None,
        };
        match kind {
            "position" => Some(Channel::Position(axis)),
            "rotation" => Some(Channel::Rotation(axis)),
            _ => None,
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, k) = match self {
            Channel::Position(a) => (a, "position"),
            Channel::Rotation(a) => (a, "rotation"),
        };
        let a = match a {
            Axis::X => "X",
            Axis::Y => "Y",
            Axis::Z => "Z",
        };
        write!(f, "{a}{k}")
    }
}

/// A ROOT, JOINT or End Site as written.
#[derive(Clone, Debug)]
pub struct Node {
    /// Name as written (`None` for an End Site).
    pub name: Option<String>,
    /// Index of the parent node (always a joint, never an End Site).
    pub parent: Option<usize>,
    pub offset: [f64; 3],
    pub channels: Vec<Channel>,
    /// Index of this node's first value on a motion line.
    pub first_channel: usize,
    /// 1-based line of the ROOT/JOINT/End keyword.
    pub line: usize,
}

impl Node {
    pub fn is_end_site(&self) -> bool {
        self.name.is_none()
    }
}

/// A deviation from the format that the parser tolerated, with the line
/// it concerns and the warning to report (see `docs/limits.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Tolerated {
    pub code: &'static str,
    pub line: usize,
    pub message: String,
}

/// A parsed file.
#[derive(Clone, Debug)]
pub struct BvhFile {
    /// Deviations read anyway, as warnings.
    pub tolerated: Vec<Tolerated>,
    /// Nodes in file order (the order of their values on a motion line).
    pub nodes: Vec<Node>,
    /// Values per motion line.
    pub channel_count: usize,
    pub frames: usize,
    /// Frame Time as written, and the value it was parsed to.
    pub frame_time_text: String,
    pub frame_time: f64,
    /// `frames * channel_count` values, frame-major.
    pub values: Vec<f64>,
}

impl BvhFile {
    /// The values of frame `f` (empty if out of range).
    pub fn frame(&self, f: usize) -> &[f64] {
        let start = f.saturating_mul(self.channel_count);
        self.values
            .get(start..start.saturating_add(self.channel_count))
            .unwrap_or(&[])
    }
}

/// Stable diagnostic codes of BVH errors.
pub mod code {
    /// Structure of HIERARCHY or the MOTION header is broken (includes a
    /// truncated hierarchy and non-text input).
    pub const SYNTAX: &str = "bvh_syntax";
    /// A CHANNELS statement is malformed.
    pub const CHANNELS: &str = "bvh_bad_channels";
    /// More than one ROOT (our rule: one skeleton per file).
    pub const MULTIPLE_ROOTS: &str = "bvh_multiple_roots";
    /// `Frames:` disagrees with the number of motion lines (by more than
    /// one: an error; by exactly one: a warning, the lines present used).
    pub const FRAME_COUNT: &str = "bvh_frame_count";
    /// A motion line has too few or too many values.
    pub const CHANNEL_COUNT: &str = "bvh_channel_count";
    /// A value is not a number.
    pub const BAD_NUMBER: &str = "bvh_bad_number";
    /// A value parses but is NaN or infinite (the model's shared code).
    pub const NON_FINITE: &str = "non_finite_value";
    /// Frame Time is not a positive number.
    pub const FRAME_TIME: &str = "bvh_frame_time";
}

/// Why a BVH file was rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct BvhError {
    pub code: &'static str,
    pub line: Option<usize>,
    pub joint: Option<String>,
    pub message: String,
    /// Set when the file is over a [`Limits`] field (code `limit_exceeded`).
    pub limit: Option<Box<LimitExceeded>>,
}

impl BvhError {
    fn at(code: &'static str, line: usize, message: impl Into<String>) -> Self {
        BvhError {
            code,
            line: Some(line),
            joint: None,
            message: message.into(),
            limit: None,
        }
    }

    fn over(line: usize, e: LimitExceeded) -> Self {
        BvhError {
            code: LIMIT_CODE,
            line: Some(line),
            joint: e.joint.clone(),
            message: e.to_string(),
            limit: Some(Box::new(e)),
        }
    }

    fn joint(mut self, name: Option<&str>) -> Self {
        self.joint = name.map(str::to_string);
        self
    }
}

type Result<T> = std::result::Result<T, BvhError>;

/// Whitespace-separated tokens over lines; `{` and `}` are always tokens of
/// their own, even when glued to a word.
struct Tokens<'a> {
    lines: &'a [&'a str],
    /// Index of the current line.
    line: usize,
    /// Unread part of the current line.
    rest: &'a str,
}

impl<'a> Tokens<'a> {
    fn new(lines: &'a [&'a str]) -> Self {
        Tokens {
            lines,
            line: 0,
            rest: lines.first().copied().unwrap_or(""),
        }
    }

    /// 1-based number of the current line.
    fn line_no(&self) -> usize {
        self.line + 1
    }

    /// Next token and its 1-based line, `None` at end of input.
    fn next(&mut self) -> Option<(&'a str, usize)> {
        loop {
            let t = self.rest.trim_start();
            if t.is_empty() {
                self.line += 1;
                self.rest = self.lines.get(self.line)?;
                continue;
            }
            let len = if t.starts_with(['{', '}']) {
                1
            } else {
                t.find(|c: char| c.is_whitespace() || c == '{' || c == '}')
                    .unwrap_or(t.len())
            };
            let (tok, rest) = t.split_at(len);
            self.rest = rest;
            return Some((tok, self.line_no()));
        }
    }

    /// The unread rest of the current line (trimmed), consumed. A trailing
    /// `{` is left unread so `JOINT name {` works.
    fn rest_of_line(&mut self) -> &'a str {
        let t = self.rest.trim();
        match t.strip_suffix('{') {
            Some(name) => {
                self.rest = "{";
                name.trim_end()
            }
            None => {
                self.rest = "";
                t
            }
        }
    }
}

/// Parse a whole file with the default [`Limits`].
#[cfg(test)]
pub fn parse(text: &str) -> Result<BvhFile> {
    parse_limited(text, &Limits::default())
}

/// Parse a whole file; joints, depth, frames, duration and the memory the
/// motion needs are checked against `limits` before anything is allocated
/// from them.
pub fn parse_limited(text: &str, limits: &Limits) -> Result<BvhFile> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut tok = Tokens::new(&lines);

    let (nodes, motion_line) = parse_hierarchy(&mut tok, limits)?;
    let channel_count = nodes.iter().map(|n| n.channels.len()).sum();

    // The MOTION keyword must be alone on its line; the header follows.
    let after = tok.rest_of_line();
    if !after.is_empty() {
        return Err(BvhError::at(
            code::SYNTAX,
            motion_line,
            format!("unexpected `{after}` after MOTION (Frames: goes on the next line)"),
        ));
    }
    let mut idx = motion_line; // 0-based index of the line after MOTION
    let (frames, frames_line) = header_line(&lines, &mut idx, "Frames", motion_line)?;
    let frames_text = frames;
    let frames: usize = frames_text.parse().map_err(|_| {
        BvhError::at(
            code::SYNTAX,
            frames_line,
            format!("`Frames:` must be a whole number, found `{frames_text}`"),
        )
    })?;
    let (ft_text, ft_line) = header_line(&lines, &mut idx, "Frame Time", frames_line)?;
    let frame_time: f64 = ft_text.parse().map_err(|_| {
        BvhError::at(
            code::FRAME_TIME,
            ft_line,
            format!("`Frame Time:` must be a number, found `{ft_text}`"),
        )
    })?;
    if !(frame_time.is_finite() && frame_time > 0.0) {
        return Err(BvhError::at(
            code::FRAME_TIME,
            ft_line,
            format!("`Frame Time:` must be a positive number of seconds, found {ft_text}"),
        ));
    }

    // Motion lines: every non-blank line after the header is one frame.
    let data: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .skip(idx)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, *l))
        .collect();
    let mut values = Vec::new();
    let mut tolerated = Vec::new();
    let mut frames = frames;
    if channel_count == 0 {
        // Nothing is animated: motion lines carry no values.
        if let Some(&(line, l)) = data.first() {
            return Err(BvhError::at(
                code::CHANNEL_COUNT,
                line,
                format!(
                    "no joint has channels, but a motion line has values: `{}`",
                    short(l)
                ),
            ));
        }
    } else if data.len() != frames {
        frames = reconcile_frame_count(frames, frames_line, ft_line, &data, &mut tolerated)?;
    }
    check_motion(frames, frame_time, channel_count, &nodes, limits)
        .map_err(|e| BvhError::over(frames_line, e))?;
    if channel_count > 0 {
        values.reserve(frames.saturating_mul(channel_count));
        for (frame, &(line, l)) in data.iter().enumerate() {
            read_frame(l, line, frame + 1, channel_count, &nodes, &mut values)?;
        }
    }

    Ok(BvhFile {
        tolerated,
        nodes,
        channel_count,
        frames,
        frame_time_text: ft_text.to_string(),
        frame_time,
        values,
    })
}

/// `Frames:` says `declared` but `data` holds another number of motion
/// lines. Off by one (exporters write the count of frames or of
/// intervals, or drop the last line): the lines present are the motion,
/// with a warning, as Blender and assimp read them. Anything else is an
/// error: the file is truncated or the header is wrong.
fn reconcile_frame_count(
    declared: usize,
    frames_line: usize,
    ft_line: usize,
    data: &[(usize, &str)],
    tolerated: &mut Vec<Tolerated>,
) -> Result<usize> {
    let present = data.len();
    if present > 0 && present.abs_diff(declared) == 1 {
        tolerated.push(Tolerated {
            code: code::FRAME_COUNT,
            line: frames_line,
            message: format!(
                "`Frames: {declared}` but the file has {present} motion line(s): the {present} lines present are used"
            ),
        });
        return Ok(present);
    }
    let line = data
        .get(declared)
        .or(data.last())
        .map(|&(l, _)| l)
        .unwrap_or(ft_line);
    Err(BvhError::at(
        code::FRAME_COUNT,
        line,
        format!(
            "`Frames: {declared}` (line {frames_line}) but the file has {present} motion line(s)"
        ),
    ))
}

/// Bytes one frame costs once imported: its values (f64) and, per
/// animated joint, a rotation and a translation key.
fn frame_bytes(channel_count: usize, nodes: &[Node]) -> u64 {
    let animated = nodes.iter().filter(|n| !n.channels.is_empty()).count() as u64;
    let key_bytes = std::mem::size_of::<ludus_anim_model::Key<ludus_anim_model::Quat>>()
        + std::mem::size_of::<ludus_anim_model::Key<ludus_anim_model::Vec3>>();
    channel_count as u64 * 8 + animated * key_bytes as u64 + 4
}

/// Frames, duration and the memory the motion needs, against `limits`.
fn check_motion(
    frames: usize,
    frame_time: f64,
    channel_count: usize,
    nodes: &[Node],
    limits: &Limits,
) -> std::result::Result<(), LimitExceeded> {
    limits.check_samples(frames as u64)?;
    limits.check_duration(frames.saturating_sub(1) as f64 * frame_time)?;
    let bytes = (frames as u64).saturating_mul(frame_bytes(channel_count, nodes));
    Limits::check(
        Limit::AssetMemory,
        "estimated memory (bytes) for the motion",
        bytes,
        limits.max_asset_memory_bytes,
    )
}

fn short(s: &str) -> String {
    const MAX: usize = 40;
    let s = s.trim();
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    }
}

/// Read `<label>: value` from the next non-blank line at `*idx` (0-based),
/// advancing past it. `label` words may be separated by any whitespace and
/// are matched case-insensitively. Returns the value text and its line.
fn header_line<'a>(
    lines: &[&'a str],
    idx: &mut usize,
    label: &str,
    prev_line: usize,
) -> Result<(&'a str, usize)> {
    while lines.get(*idx).is_some_and(|l| l.trim().is_empty()) {
        *idx += 1;
    }
    let Some(&raw) = lines.get(*idx) else {
        return Err(BvhError::at(
            code::SYNTAX,
            prev_line,
            format!("file ends before `{label}:` (truncated?)"),
        ));
    };
    *idx += 1;
    let line_no = *idx;
    let mut rest = raw.trim_start();
    for word in label.split(' ') {
        let ok = rest
            .get(..word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word));
        if !ok {
            return Err(BvhError::at(
                code::SYNTAX,
                line_no,
                format!("expected `{label}:`, found `{}`", short(raw)),
            ));
        }
        rest = rest.get(word.len()..).unwrap_or("").trim_start();
    }
    match rest.strip_prefix(':') {
        Some(v) if !v.trim().is_empty() => Ok((v.trim(), line_no)),
        _ => Err(BvhError::at(
            code::SYNTAX,
            line_no,
            format!("expected `{label}: <value>`, found `{}`", short(raw)),
        )),
    }
}

/// A node still open (its `}` not yet read).
struct Open {
    node: usize,
    offset_seen: bool,
    channels_seen: bool,
}

/// HIERARCHY up to and including the MOTION keyword. Returns the nodes and
/// the 1-based line of MOTION. Iterative, so nesting depth cannot overflow
/// the stack.
fn parse_hierarchy(tok: &mut Tokens<'_>, limits: &Limits) -> Result<(Vec<Node>, usize)> {
    match tok.next() {
        Some(("HIERARCHY", _)) => {}
        Some((t, line)) => {
            return Err(BvhError::at(
                code::SYNTAX,
                line,
                format!(
                    "expected `HIERARCHY` (is this a BVH file?), found `{}`",
                    short(t)
                ),
            ))
        }
        None => {
            return Err(BvhError::at(
                code::SYNTAX,
                1,
                "empty file: expected `HIERARCHY`",
            ))
        }
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<(String, usize)> = None;
    let mut next_channel = 0usize;
    let mut joints = 0usize;

    loop {
        let Some((t, line)) = tok.next() else {
            let msg = match stack.last().and_then(|o| nodes.get(o.node)) {
                Some(n) => format!(
                    "file ends inside {} opened at line {} (truncated?)",
                    describe(n),
                    n.line
                ),
                None => "file ends before `MOTION` (truncated?)".to_string(),
            };
            return Err(BvhError::at(
                code::SYNTAX,
                tok.line_no().min(tok.lines.len().max(1)),
                msg,
            ));
        };
        let top_name = stack
            .last()
            .and_then(|o| nodes.get(o.node))
            .and_then(|n| n.name.clone());
        match t {
            "ROOT" | "JOINT" => {
                if t == "ROOT" && !stack.is_empty() {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`ROOT` inside a joint (expected `JOINT`)",
                    )
                    .joint(top_name.as_deref()));
                }
                if t == "JOINT" && stack.is_empty() {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`JOINT` outside any ROOT (expected `ROOT` or `MOTION`)",
                    ));
                }
                if let Some(parent) = stack.last().and_then(|o| nodes.get(o.node)) {
                    if parent.is_end_site() {
                        return Err(BvhError::at(
                            code::SYNTAX,
                            line,
                            "an End Site cannot have children",
                        ));
                    }
                }
                let name = tok.rest_of_line();
                if name.is_empty() {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        format!("`{t}` without a name"),
                    ));
                }
                if t == "ROOT" {
                    if let Some((first, first_line)) = &root {
                        return Err(BvhError::at(
                            code::MULTIPLE_ROOTS,
                            line,
                            format!(
                                "second ROOT '{name}' (first ROOT '{first}' at line {first_line}): only one skeleton per BVH file is supported"
                            ),
                        )
                        .joint(Some(name)));
                    }
                    root = Some((name.to_string(), line));
                }
                expect_open(tok, line, name)?;
                joints += 1;
                limits
                    .check_joints(joints)
                    .and_then(|()| limits.check_depth(stack.len() + 1))
                    .map_err(|e| BvhError::over(line, e.joint(name)))?;
                let parent = stack.last().map(|o| o.node);
                open_node(
                    &mut nodes,
                    &mut stack,
                    Some(name.to_string()),
                    parent,
                    next_channel,
                    line,
                );
            }
            "End" => {
                let Some(parent) = stack.last() else {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`End Site` outside any joint",
                    ));
                };
                match tok.next() {
                    Some((s, l)) if l == line && s.eq_ignore_ascii_case("Site") => {}
                    _ => return Err(BvhError::at(code::SYNTAX, line, "expected `End Site`")),
                }
                if nodes.get(parent.node).is_some_and(Node::is_end_site) {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "an End Site cannot have children",
                    ));
                }
                expect_open(tok, line, "End Site")?;
                let parent = Some(parent.node);
                open_node(&mut nodes, &mut stack, None, parent, next_channel, line);
            }
            "OFFSET" => {
                let Some(open) = stack.last_mut() else {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`OFFSET` outside any joint",
                    ));
                };
                if open.offset_seen {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "second `OFFSET` for the same joint",
                    )
                    .joint(top_name.as_deref()));
                }
                open.offset_seen = true;
                let mut v = [0.0f64; 3];
                for (i, c) in v.iter_mut().enumerate() {
                    let (s, l) = tok.next().unwrap_or(("end of file", line));
                    *c = s
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            BvhError::at(
                                code::BAD_NUMBER,
                                l,
                                format!(
                                    "OFFSET value {} must be a finite number, found `{}`",
                                    i + 1,
                                    short(s)
                                ),
                            )
                            .joint(top_name.as_deref())
                        })?;
                }
                if let Some(n) = nodes.get_mut(open.node) {
                    n.offset = v;
                }
            }
            "CHANNELS" => {
                let Some(open) = stack.last_mut() else {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`CHANNELS` outside any joint",
                    ));
                };
                let Some(node) = nodes.get_mut(open.node) else {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`CHANNELS` outside any joint",
                    ));
                };
                let jname = node.name.clone();
                if node.is_end_site() {
                    return Err(BvhError::at(
                        code::CHANNELS,
                        line,
                        "an End Site cannot have CHANNELS",
                    ));
                }
                if open.channels_seen {
                    return Err(BvhError::at(
                        code::CHANNELS,
                        line,
                        "second `CHANNELS` for the same joint",
                    )
                    .joint(jname.as_deref()));
                }
                open.channels_seen = true;
                let (s, l) = tok.next().unwrap_or(("end of file", line));
                let count = s.parse::<usize>().ok().filter(|&n| n <= 6).ok_or_else(|| {
                    BvhError::at(
                        code::CHANNELS,
                        l,
                        format!(
                            "CHANNELS count must be a whole number from 0 to 6, found `{}`",
                            short(s)
                        ),
                    )
                    .joint(jname.as_deref())
                })?;
                for _ in 0..count {
                    let (s, l) = tok.next().unwrap_or(("end of file", line));
                    let ch = Channel::parse(s).ok_or_else(|| {
                        BvhError::at(
                            code::CHANNELS,
                            l,
                            format!(
                                "expected a channel name (Xposition ... Zrotation), found `{}` (CHANNELS {count} lists fewer names?)",
                                short(s)
                            ),
                        )
                        .joint(jname.as_deref())
                    })?;
                    if node.channels.contains(&ch) {
                        return Err(BvhError::at(
                            code::CHANNELS,
                            l,
                            format!("channel {ch} listed twice"),
                        )
                        .joint(jname.as_deref()));
                    }
                    node.channels.push(ch);
                }
                node.first_channel = next_channel;
                next_channel += count;
            }
            "}" => {
                let Some(open) = stack.pop() else {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        "`}` without a matching `{`",
                    ));
                };
                if !open.offset_seen {
                    let n = nodes.get(open.node);
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        format!("{} has no OFFSET", n.map(describe).unwrap_or_default()),
                    )
                    .joint(n.and_then(|n| n.name.as_deref())));
                }
            }
            "MOTION" => {
                if let Some(n) = stack.last().and_then(|o| nodes.get(o.node)) {
                    return Err(BvhError::at(
                        code::SYNTAX,
                        line,
                        format!(
                            "`MOTION` before {} (line {}) is closed: missing `}}`",
                            describe(n),
                            n.line
                        ),
                    ));
                }
                if root.is_none() {
                    return Err(BvhError::at(code::SYNTAX, line, "`MOTION` before any ROOT"));
                }
                return Ok((nodes, line));
            }
            other => {
                let want = if stack.is_empty() {
                    "`ROOT` or `MOTION`"
                } else {
                    "`OFFSET`, `CHANNELS`, `JOINT`, `End Site` or `}`"
                };
                return Err(BvhError::at(
                    code::SYNTAX,
                    line,
                    format!("expected {want}, found `{}`", short(other)),
                )
                .joint(top_name.as_deref()));
            }
        }
    }
}

fn describe(n: &Node) -> String {
    match &n.name {
        Some(name) => format!("joint '{name}'"),
        None => "an End Site".to_string(),
    }
}

/// Start a node (a joint when `name` is set, else an End Site) and keep it
/// open until its `}`.
fn open_node(
    nodes: &mut Vec<Node>,
    stack: &mut Vec<Open>,
    name: Option<String>,
    parent: Option<usize>,
    first_channel: usize,
    line: usize,
) {
    nodes.push(Node {
        name,
        parent,
        offset: [0.0; 3],
        channels: Vec::new(),
        first_channel,
        line,
    });
    stack.push(Open {
        node: nodes.len() - 1,
        offset_seen: false,
        channels_seen: false,
    });
}

fn expect_open(tok: &mut Tokens<'_>, line: usize, what: &str) -> Result<()> {
    match tok.next() {
        Some(("{", _)) => Ok(()),
        Some((t, l)) => Err(BvhError::at(
            code::SYNTAX,
            l,
            format!(
                "expected `{{` after `{what}` (line {line}), found `{}`",
                short(t)
            ),
        )),
        None => Err(BvhError::at(
            code::SYNTAX,
            line,
            format!("file ends after `{what}` (truncated?)"),
        )),
    }
}

/// The node that owns value `index` of a motion line, and which channel.
fn owner(nodes: &[Node], index: usize) -> Option<(&Node, Channel)> {
    nodes.iter().find_map(|n| {
        let k = index.checked_sub(n.first_channel)?;
        n.channels.get(k).map(|&c| (n, c))
    })
}

/// Parse one motion line (frame number `frame`, 1-based) of exactly
/// `count` values onto `out`.
fn read_frame(
    text: &str,
    line: usize,
    frame: usize,
    count: usize,
    nodes: &[Node],
    out: &mut Vec<f64>,
) -> Result<()> {
    let mut n = 0usize;
    for word in text.split_ascii_whitespace() {
        if n == count {
            let extra = text.split_ascii_whitespace().count().saturating_sub(count);
            return Err(BvhError::at(
                code::CHANNEL_COUNT,
                line,
                format!(
                    "frame {frame} has {} values, expected {count} (the joints' channels): {extra} extra",
                    count + extra
                ),
            ));
        }
        match word.parse::<f64>() {
            Ok(v) if v.is_finite() => out.push(v),
            parsed => {
                let (node, ch) = match owner(nodes, n) {
                    Some((node, ch)) => (node.name.as_deref(), ch.to_string()),
                    None => (None, "?".to_string()),
                };
                let (code, what) = if parsed.is_ok() {
                    (code::NON_FINITE, "is not finite")
                } else {
                    (code::BAD_NUMBER, "is not a number")
                };
                return Err(BvhError::at(
                    code,
                    line,
                    format!(
                        "frame {frame}, value {} (joint '{}', {ch}): `{}` {what}",
                        n + 1,
                        node.unwrap_or("?"),
                        short(word)
                    ),
                )
                .joint(node));
            }
        }
        n += 1;
    }
    if n < count {
        let (node, ch) = match owner(nodes, n) {
            Some((node, ch)) => (node.name.as_deref(), ch.to_string()),
            None => (None, "?".to_string()),
        };
        return Err(BvhError::at(
            code::CHANNEL_COUNT,
            line,
            format!(
                "frame {frame} has {n} values, expected {count}: joint '{}' is short (first missing channel: {ch})",
                node.unwrap_or("?")
            ),
        )
        .joint(node));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "HIERARCHY\nROOT Hips\n{\n  OFFSET 1 2 3\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  JOINT Leg {\n    OFFSET 0 -1 0\n    CHANNELS 1 Xrotation\n    End Site\n    {\n      OFFSET 0 -1 0\n    }\n  }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n1 2 3 4 5 6 7\n1 2 3 4 5 6 8\n";

    #[test]
    fn small_file_structure() {
        let f = parse(SMALL).unwrap();
        assert_eq!(f.nodes.len(), 3);
        assert_eq!(f.channel_count, 7);
        assert_eq!(f.nodes[1].first_channel, 6);
        assert_eq!(f.nodes[1].parent, Some(0));
        assert!(f.nodes[2].is_end_site());
        assert_eq!(f.frames, 2);
        assert_eq!(f.frame(1), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]);
        assert_eq!(
            f.nodes[0].channels[3..],
            [
                Channel::Rotation(Axis::Z),
                Channel::Rotation(Axis::X),
                Channel::Rotation(Axis::Y)
            ]
        );
    }

    #[test]
    fn every_prefix_fails_cleanly() {
        for end in 0..SMALL.len() {
            let _ = parse(&SMALL[..end]);
        }
    }

    #[test]
    fn short_line_names_joint() {
        let e = parse(&SMALL.replace("1 2 3 4 5 6 8", "1 2 3 4 5 6")).unwrap_err();
        assert_eq!(e.code, code::CHANNEL_COUNT);
        assert_eq!(e.line, Some(19));
        assert_eq!(e.joint.as_deref(), Some("Leg"));
    }
}
