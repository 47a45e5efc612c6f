//! Transition predicates: a small typed expression language over the
//! tick's input snapshot and the prior tick's control state, compiled to
//! [`PredOp`] code.
//!
//! ```text
//! expr := and ("||" and)*      and := unary ("&&" unary)*
//! unary := "!" unary | cmp     cmp := atom (("<"|"<="|">"|">="|"=="|"!=") atom)?
//! atom := NUMBER | "true" | "false" | IDENT | "(" expr ")"
//! ```
//! Identifiers are parameters, `state_time` (float, seconds in the
//! active leaf) and `completed` (bool); an enum parameter compares with
//! `==`/`!=` against one of its value names. No side effects, no calls.

use crate::located::did_you_mean;
use crate::plan::{Param, ParamKind, PredOp};

/// A predicate error: byte offset in the predicate text, message, and a
/// suggested name.
#[derive(Clone, Debug, PartialEq)]
pub struct PredicateError {
    pub offset: usize,
    pub message: String,
    pub suggestion: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    Float,
    Bool,
    Enum(u16),
    /// An identifier that is no parameter: an enum value name, typed by
    /// the comparison it appears in.
    Word(usize),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Sym(&'static str),
}

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, PredicateError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit()
            || c == b'.'
            || (c == b'-' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'e' || b[i] == b'E')
            {
                i += 1;
            }
            let s = &text[start..i];
            let v: f64 = s.parse().map_err(|_| PredicateError {
                offset: start,
                message: format!("'{s}' is not a number"),
                suggestion: None,
            })?;
            out.push((start, Tok::Num(v)));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((start, Tok::Ident(text[start..i].to_string())));
        } else {
            let two = text.get(i..i + 2).unwrap_or("");
            let sym = ["<=", ">=", "==", "!=", "&&", "||"]
                .into_iter()
                .find(|s| *s == two);
            if let Some(s) = sym {
                i += 2;
                out.push((start, Tok::Sym(s)));
            } else if let Some(s) = ["<", ">", "!", "(", ")"]
                .into_iter()
                .find(|s| s.as_bytes()[0] == c)
            {
                i += 1;
                out.push((start, Tok::Sym(s)));
            } else {
                return Err(PredicateError {
                    offset: start,
                    message: format!(
                        "unexpected character '{}'",
                        text[start..].chars().next().unwrap_or('?')
                    ),
                    suggestion: None,
                });
            }
        }
    }
    Ok(out)
}

struct Parser<'p> {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    params: &'p [Param],
    words: Vec<String>,
    code: Vec<PredOp>,
}

/// Compile `text` against `params`.
pub fn compile(text: &str, params: &[Param]) -> Result<Vec<PredOp>, PredicateError> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        end: text.len(),
        params,
        words: Vec::new(),
        code: Vec::new(),
    };
    let (ty, at) = p.expr(0)?;
    if let Some((o, _)) = p.toks.get(p.pos) {
        return Err(p.err(*o, "unexpected text after the expression"));
    }
    p.expect_bool(ty, at)?;
    if !crate::plan::check_predicate(&p.code, params.len()) {
        return Err(p.err(0, "the predicate nests too deeply"));
    }
    Ok(p.code)
}

impl Parser<'_> {
    fn err(&self, offset: usize, message: impl Into<String>) -> PredicateError {
        PredicateError {
            offset,
            message: message.into(),
            suggestion: None,
        }
    }
    fn peek_sym(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some((_, Tok::Sym(s))) => Some(s),
            _ => None,
        }
    }
    fn here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |t| t.0)
    }
    fn expect_bool(&self, ty: Ty, at: usize) -> Result<(), PredicateError> {
        match ty {
            Ty::Bool => Ok(()),
            Ty::Word(w) => Err(self.unknown(&self.words[w], at)),
            _ => Err(self.err(
                at,
                "expected a bool (a comparison, a bool parameter, `completed`)",
            )),
        }
    }
    fn unknown(&self, name: &str, at: usize) -> PredicateError {
        let known = self.params.iter().map(|p| p.name.as_str()).chain([
            "state_time",
            "completed",
            "true",
            "false",
        ]);
        PredicateError {
            offset: at,
            message: format!("unknown parameter '{name}'"),
            suggestion: did_you_mean(name, known),
        }
    }

    fn expr(&mut self, depth: u32) -> Result<(Ty, usize), PredicateError> {
        if depth > 32 {
            return Err(self.err(self.here(), "the predicate nests too deeply"));
        }
        let (mut ty, at) = self.and(depth)?;
        while self.peek_sym() == Some("||") {
            self.expect_bool(ty, at)?;
            self.pos += 1;
            let o = self.here();
            let (r, _) = self.and(depth)?;
            self.expect_bool(r, o)?;
            self.code.push(PredOp::Or);
            ty = Ty::Bool;
        }
        Ok((ty, at))
    }
    fn and(&mut self, depth: u32) -> Result<(Ty, usize), PredicateError> {
        let (mut ty, at) = self.unary(depth)?;
        while self.peek_sym() == Some("&&") {
            self.expect_bool(ty, at)?;
            self.pos += 1;
            let o = self.here();
            let (r, _) = self.unary(depth)?;
            self.expect_bool(r, o)?;
            self.code.push(PredOp::And);
            ty = Ty::Bool;
        }
        Ok((ty, at))
    }
    fn unary(&mut self, depth: u32) -> Result<(Ty, usize), PredicateError> {
        if self.peek_sym() == Some("!") {
            let at = self.here();
            self.pos += 1;
            let o = self.here();
            let (t, _) = self.unary(depth + 1)?;
            self.expect_bool(t, o)?;
            self.code.push(PredOp::Not);
            return Ok((Ty::Bool, at));
        }
        self.cmp(depth)
    }
    fn cmp(&mut self, depth: u32) -> Result<(Ty, usize), PredicateError> {
        let at = self.here();
        let mark = self.code.len();
        let (l, _) = self.atom(depth)?;
        let op = match self.peek_sym() {
            Some("<") => PredOp::Lt,
            Some("<=") => PredOp::Le,
            Some(">") => PredOp::Gt,
            Some(">=") => PredOp::Ge,
            Some("==") => PredOp::Eq,
            Some("!=") => PredOp::Ne,
            _ => return Ok((l, at)),
        };
        self.pos += 1;
        let ro = self.here();
        let rmark = self.code.len();
        let (r, _) = self.atom(depth)?;
        let equality = matches!(op, PredOp::Eq | PredOp::Ne);
        match (l, r) {
            (Ty::Float, Ty::Float) => {}
            (Ty::Bool, Ty::Bool) if equality => {}
            (Ty::Enum(p), Ty::Word(w)) if equality => self.enum_value(p, w, rmark, ro)?,
            (Ty::Word(w), Ty::Enum(p)) if equality => self.enum_value(p, w, mark, at)?,
            (Ty::Enum(a), Ty::Enum(b)) if equality && a == b => {}
            (Ty::Word(w), _) => return Err(self.unknown(&self.words[w].clone(), at)),
            (_, Ty::Word(w)) => return Err(self.unknown(&self.words[w].clone(), ro)),
            _ => {
                return Err(self.err(
                    at,
                    "the two sides of this comparison have different or unordered types",
                ))
            }
        }
        self.code.push(op);
        Ok((Ty::Bool, at))
    }
    /// Replace the placeholder pushed for word `w` at code index `slot`
    /// by the index of that value of enum parameter `p`.
    fn enum_value(
        &mut self,
        p: u16,
        w: usize,
        slot: usize,
        at: usize,
    ) -> Result<(), PredicateError> {
        let ParamKind::Enum { values, .. } = &self.params[usize::from(p)].kind else {
            return Err(self.err(at, "not an enum"));
        };
        let word = &self.words[w];
        match values.iter().position(|v| v == word) {
            Some(i) => {
                self.code[slot] = PredOp::Const(i as f32);
                Ok(())
            }
            None => Err(PredicateError {
                offset: at,
                message: format!(
                    "'{word}' is not a value of enum parameter '{}' ({})",
                    self.params[usize::from(p)].name,
                    values.join(", ")
                ),
                suggestion: did_you_mean(word, values.iter().map(String::as_str)),
            }),
        }
    }
    fn atom(&mut self, depth: u32) -> Result<(Ty, usize), PredicateError> {
        let Some((at, tok)) = self.toks.get(self.pos).cloned() else {
            return Err(self.err(self.end, "expected a value"));
        };
        self.pos += 1;
        match tok {
            Tok::Num(v) => {
                let v = v as f32;
                if !v.is_finite() {
                    return Err(self.err(at, "the number is out of range"));
                }
                self.code.push(PredOp::Const(v));
                Ok((Ty::Float, at))
            }
            Tok::Sym("(") => {
                let (t, _) = self.expr(depth + 1)?;
                if self.peek_sym() != Some(")") {
                    return Err(self.err(self.here(), "expected ')'"));
                }
                self.pos += 1;
                Ok((t, at))
            }
            Tok::Sym(s) => Err(self.err(at, format!("unexpected '{s}'"))),
            Tok::Ident(name) => {
                let ty = match name.as_str() {
                    "true" | "false" => {
                        self.code
                            .push(PredOp::Const(f32::from(u8::from(name == "true"))));
                        Ty::Bool
                    }
                    "state_time" => {
                        self.code.push(PredOp::StateTime);
                        Ty::Float
                    }
                    "completed" => {
                        self.code.push(PredOp::Completed);
                        Ty::Bool
                    }
                    _ => match self.params.iter().position(|p| p.name == name) {
                        Some(i) => {
                            let i = u16::try_from(i)
                                .map_err(|_| self.err(at, "too many parameters"))?;
                            self.code.push(PredOp::Param(i));
                            match self.params[usize::from(i)].kind {
                                ParamKind::Float { .. } => Ty::Float,
                                ParamKind::Bool { .. } => Ty::Bool,
                                ParamKind::Enum { .. } => Ty::Enum(i),
                            }
                        }
                        None => {
                            self.code.push(PredOp::Const(0.0));
                            self.words.push(name);
                            Ty::Word(self.words.len() - 1)
                        }
                    },
                };
                Ok((ty, at))
            }
        }
    }
}

/// Whether a predicate reads `state_time` (a transition that waits in its
/// state cannot close a zero-time cycle).
pub fn reads_state_time(code: &[PredOp]) -> bool {
    code.contains(&PredOp::StateTime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::eval_predicate;

    fn params() -> Vec<Param> {
        vec![
            Param {
                name: "speed".into(),
                kind: ParamKind::Float {
                    min: 0.0,
                    max: 4.0,
                    default: 0.0,
                },
            },
            Param {
                name: "aiming".into(),
                kind: ParamKind::Bool { default: false },
            },
            Param {
                name: "stance".into(),
                kind: ParamKind::Enum {
                    values: vec!["stand".into(), "crouch".into()],
                    default: 0,
                },
            },
        ]
    }

    #[test]
    fn typed_expressions_evaluate() {
        let p = params();
        let code = compile("speed > 0.1 && !aiming || stance == crouch", &p).unwrap();
        assert!(eval_predicate(&code, &[0.5, 0.0, 0.0], 0.0, false));
        assert!(!eval_predicate(&code, &[0.5, 1.0, 0.0], 0.0, false));
        assert!(eval_predicate(&code, &[0.0, 1.0, 1.0], 0.0, false));
        let code = compile("completed || state_time >= 0.5", &p).unwrap();
        assert!(eval_predicate(&code, &[0.0; 3], 0.6, false));
        assert!(!eval_predicate(&code, &[0.0; 3], 0.4, false));
    }

    #[test]
    fn errors_name_the_place_and_the_nearest_name() {
        let p = params();
        let e = compile("sped > 1", &p).unwrap_err();
        assert_eq!((e.offset, e.suggestion.as_deref()), (0, Some("speed")));
        let e = compile("stance == crouh", &p).unwrap_err();
        assert_eq!(e.suggestion.as_deref(), Some("crouch"));
        assert!(compile("speed", &p).is_err(), "a float is not a predicate");
        assert!(compile("speed > aiming", &p).is_err());
        assert!(compile("(speed > 1", &p).is_err());
    }
}
