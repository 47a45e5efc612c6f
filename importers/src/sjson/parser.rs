//! A small, strict parser for "simplified JSON" (SJSON), the syntax of ACL
//! raw clip files.
//!
//! No SJSON crate exists, and ACL files are simple enough that a hand-written
//! tokenizer and recursive-descent parser is shorter than adapting a JSON
//! parser. The grammar accepted here is deliberately narrow, so that a
//! damaged file fails loudly at the place it is damaged instead of being
//! half-read:
//!
//! - the top level is an implicit object: `key = value` members up to the end
//!   of the input;
//! - object members are `key = value`; keys are bare identifiers
//!   (`[A-Za-z_][A-Za-z0-9_]*`) or double-quoted strings; commas between
//!   members and between array elements are optional;
//! - values are double-quoted strings (JSON escapes, single line), numbers
//!   (decimal with optional sign, fraction and exponent), `true`, `false`,
//!   `{ ... }` objects and `[ ... ]` arrays;
//! - `// line` and `/* block */` comments count as whitespace;
//! - there is no `null`, `nan` or `inf`: they are syntax errors, which is
//!   what a non-finite value written by a careless exporter deserves;
//! - a key may appear only once per object.
//!
//! Every value keeps the line and column where it starts, so the schema
//! layer above can report wrong types and wrong lengths where they are.
//! Columns count bytes from 1.

use std::fmt;

/// A position in the input, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}:{}", self.line, self.col)
    }
}

/// A syntax error: where, and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct ParseError {
    pub pos: Pos,
    pub message: String,
}

/// A parsed value and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub pos: Pos,
    pub kind: ValueKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    Bool(bool),
    Number(f64),
    Str(String),
    /// An array whose elements are all numbers (including the empty array).
    /// Kept flat because ACL files are mostly such arrays: a 10 MB clip
    /// would otherwise cost a million boxed values.
    Numbers(Vec<f64>),
    /// Any other array.
    Array(Vec<Value>),
    Object(Vec<Member>),
}

/// One `key = value` member of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_pos: Pos,
    pub value: Value,
}

impl Value {
    /// A short name of the value's type, for "expected X, found Y" messages.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            ValueKind::Bool(_) => "a boolean",
            ValueKind::Number(_) => "a number",
            ValueKind::Str(_) => "a string",
            ValueKind::Numbers(_) | ValueKind::Array(_) => "an array",
            ValueKind::Object(_) => "an object",
        }
    }
}

/// Deepest nesting accepted. ACL clips need 3 levels; the limit only exists
/// so that hostile input (`[[[[...`) cannot overflow the stack.
const MAX_DEPTH: usize = 64;

/// Parse a whole document: the members of the implicit top-level object.
pub fn parse_document(text: &str) -> Result<Vec<Member>, ParseError> {
    let mut p = Parser {
        lex: Lexer::new(text),
    };
    p.members(None, 0)
}

/// Tokens of the grammar. Strings are unescaped already.
#[derive(Clone, Debug, PartialEq)]
enum Token<'a> {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Equals,
    Comma,
    Str(String),
    Number(f64),
    Ident(&'a str),
    Eof,
}

impl Token<'_> {
    /// How the token is named in "found ..." messages.
    fn describe(&self) -> String {
        match self {
            Token::LBrace => "`{`".into(),
            Token::RBrace => "`}`".into(),
            Token::LBracket => "`[`".into(),
            Token::RBracket => "`]`".into(),
            Token::Equals => "`=`".into(),
            Token::Comma => "`,`".into(),
            Token::Str(s) => format!("string \"{}\"", shorten(s)),
            Token::Number(n) => format!("number {n}"),
            Token::Ident(s) => format!("`{}`", shorten(s)),
            Token::Eof => "end of file".into(),
        }
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}...")
    }
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        // A UTF-8 byte order mark is not content.
        let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Lexer {
            text,
            bytes: text.as_bytes(),
            i: start,
            line: 1,
            line_start: start,
        }
    }

    fn pos_at(&self, i: usize) -> Pos {
        Pos {
            line: self.line,
            col: (i.saturating_sub(self.line_start) + 1).min(u32::MAX as usize) as u32,
        }
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError {
            pos,
            message: message.into(),
        }
    }

    fn newline(&mut self, at: usize) {
        self.line = self.line.saturating_add(1);
        self.line_start = at + 1;
    }

    /// Skip whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        while let Some(&b) = self.bytes.get(self.i) {
            match b {
                b'\n' => {
                    self.newline(self.i);
                    self.i += 1;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'/' => match self.bytes.get(self.i + 1) {
                    Some(b'/') => {
                        while let Some(&c) = self.bytes.get(self.i) {
                            if c == b'\n' {
                                break;
                            }
                            self.i += 1;
                        }
                    }
                    Some(b'*') => {
                        let start = self.pos_at(self.i);
                        self.i += 2;
                        loop {
                            match self.bytes.get(self.i) {
                                None => return Err(self.err(start, "unterminated `/*` comment")),
                                Some(b'*') if self.bytes.get(self.i + 1) == Some(&b'/') => {
                                    self.i += 2;
                                    break;
                                }
                                Some(b'\n') => {
                                    self.newline(self.i);
                                    self.i += 1;
                                }
                                Some(_) => self.i += 1,
                            }
                        }
                    }
                    _ => {
                        return Err(self.err(
                            self.pos_at(self.i),
                            "unexpected `/` (comments start with `//` or `/*`)",
                        ))
                    }
                },
                _ => break,
            }
        }
        Ok(())
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Token<'a>, Pos), ParseError> {
        self.skip_trivia()?;
        let pos = self.pos_at(self.i);
        let Some(&b) = self.bytes.get(self.i) else {
            return Ok((Token::Eof, pos));
        };
        let single = match b {
            b'{' => Some(Token::LBrace),
            b'}' => Some(Token::RBrace),
            b'[' => Some(Token::LBracket),
            b']' => Some(Token::RBracket),
            b'=' => Some(Token::Equals),
            b',' => Some(Token::Comma),
            _ => None,
        };
        if let Some(t) = single {
            self.i += 1;
            return Ok((t, pos));
        }
        match b {
            b'"' => self.string(pos).map(|s| (Token::Str(s), pos)),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(pos).map(|n| (Token::Number(n), pos)),
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                let start = self.i;
                while matches!(
                    self.bytes.get(self.i),
                    Some(b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_')
                ) {
                    self.i += 1;
                }
                Ok((Token::Ident(&self.text[start..self.i]), pos))
            }
            _ => {
                let ch = self.text[self.i..].chars().next().unwrap_or('?');
                Err(self.err(pos, format!("unexpected character {ch:?}")))
            }
        }
    }

    /// A decimal number. The lexeme is the longest run of characters that
    /// can appear in one; Rust's float parser then decides whether it is one.
    fn number(&mut self, pos: Pos) -> Result<f64, ParseError> {
        let start = self.i;
        while let Some(&c) = self.bytes.get(self.i) {
            let exp_sign = (c == b'-' || c == b'+')
                && matches!(self.bytes.get(self.i.wrapping_sub(1)), Some(b'e' | b'E'));
            let ok = c.is_ascii_digit()
                || c == b'.'
                || c == b'e'
                || c == b'E'
                || exp_sign
                || self.i == start;
            if !ok {
                break;
            }
            self.i += 1;
        }
        // A letter glued to the number (`1.0f`, `1x`) makes it malformed.
        while matches!(self.bytes.get(self.i), Some(c) if c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
        {
            self.i += 1;
        }
        let lexeme = &self.text[start..self.i];
        // Rust also accepts "inf"/"nan" spellings; SJSON does not.
        let has_digit = lexeme.bytes().any(|c| c.is_ascii_digit());
        match lexeme.parse::<f64>() {
            Ok(v)
                if has_digit
                    && !lexeme
                        .bytes()
                        .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E') =>
            {
                Ok(v)
            }
            _ => Err(self.err(pos, format!("malformed number `{}`", shorten(lexeme)))),
        }
    }

    /// A double-quoted string on one line, with JSON escapes.
    fn string(&mut self, pos: Pos) -> Result<String, ParseError> {
        self.i += 1; // opening quote
        let mut out = String::new();
        let mut run_start = self.i;
        loop {
            let Some(&c) = self.bytes.get(self.i) else {
                return Err(self.err(
                    pos,
                    "unterminated string (end of file before the closing `\"`)",
                ));
            };
            match c {
                b'"' => {
                    out.push_str(&self.text[run_start..self.i]);
                    self.i += 1;
                    return Ok(out);
                }
                b'\n' | b'\r' => {
                    return Err(self.err(
                        pos,
                        "unterminated string (end of line before the closing `\"`)",
                    ));
                }
                b'\\' => {
                    out.push_str(&self.text[run_start..self.i]);
                    let esc_pos = self.pos_at(self.i);
                    let e = self.bytes.get(self.i + 1).copied();
                    self.i += 2;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'n') => out.push('\n'),
                        Some(b't') => out.push('\t'),
                        Some(b'r') => out.push('\r'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'u') => {
                            let hex = self.text.get(self.i..self.i + 4).unwrap_or("");
                            let code =
                                if hex.len() == 4 && hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                                    u32::from_str_radix(hex, 16).ok()
                                } else {
                                    None
                                };
                            // Surrogate pairs are not needed for bone names;
                            // a lone surrogate becomes U+FFFD.
                            match code {
                                Some(c) => out.push(char::from_u32(c).unwrap_or('\u{fffd}')),
                                None => {
                                    return Err(
                                        self.err(esc_pos, "`\\u` must be followed by 4 hex digits")
                                    )
                                }
                            }
                            self.i += 4;
                        }
                        _ => return Err(self.err(esc_pos, "invalid escape sequence in string")),
                    }
                    run_start = self.i;
                }
                _ => self.i += 1,
            }
        }
    }
}

struct Parser<'a> {
    lex: Lexer<'a>,
}

impl<'a> Parser<'a> {
    fn err(pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError {
            pos,
            message: message.into(),
        }
    }

    /// Members up to `}` (when `open` is the position of the `{`) or up to
    /// the end of input (top level, `open == None`).
    fn members(&mut self, open: Option<Pos>, depth: usize) -> Result<Vec<Member>, ParseError> {
        let mut out: Vec<Member> = Vec::new();
        // One optional comma may follow each member.
        let mut comma_ok = false;
        loop {
            let (tok, pos) = self.lex.next()?;
            let key = match tok {
                Token::RBrace if open.is_some() => return Ok(out),
                Token::Eof => {
                    return match open {
                        None => Ok(out),
                        Some(o) => Err(Self::err(
                            pos,
                            format!("end of file inside the object opened at {o} (missing `}}`)"),
                        )),
                    }
                }
                Token::Comma if comma_ok => {
                    comma_ok = false;
                    continue;
                }
                Token::Ident(s) => s.to_string(),
                Token::Str(s) => s,
                other => {
                    let want = if open.is_some() {
                        "a key or `}`"
                    } else {
                        "a key"
                    };
                    return Err(Self::err(
                        pos,
                        format!("expected {want}, found {}", other.describe()),
                    ));
                }
            };
            match self.lex.next()? {
                (Token::Equals, _) => {}
                (other, p) => {
                    return Err(Self::err(
                        p,
                        format!(
                            "expected `=` after key `{}`, found {}",
                            shorten(&key),
                            other.describe()
                        ),
                    ));
                }
            }
            let value = self.value(depth)?;
            if let Some(first) = out.iter().find(|m| m.key == key) {
                return Err(Self::err(
                    pos,
                    format!(
                        "duplicate key `{}` (first at {})",
                        shorten(&key),
                        first.key_pos
                    ),
                ));
            }
            out.push(Member {
                key,
                key_pos: pos,
                value,
            });
            comma_ok = true;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        let (tok, pos) = self.lex.next()?;
        self.value_from(tok, pos, depth)
    }

    /// The value that starts with the already-read token `tok`.
    fn value_from(&mut self, tok: Token<'a>, pos: Pos, depth: usize) -> Result<Value, ParseError> {
        if depth >= MAX_DEPTH && matches!(tok, Token::LBrace | Token::LBracket) {
            return Err(Self::err(
                pos,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        let kind = match tok {
            Token::Str(s) => ValueKind::Str(s),
            Token::Number(n) => ValueKind::Number(n),
            Token::Ident("true") => ValueKind::Bool(true),
            Token::Ident("false") => ValueKind::Bool(false),
            Token::LBrace => ValueKind::Object(self.members(Some(pos), depth + 1)?),
            Token::LBracket => self.array(pos, depth + 1)?,
            Token::Ident(s)
                if ["nan", "inf", "infinity", "null"]
                    .contains(&s.to_ascii_lowercase().as_str()) =>
            {
                return Err(Self::err(
                    pos,
                    format!("expected a value, found `{s}` (SJSON has no null, NaN or infinity literals)"),
                ));
            }
            other => {
                return Err(Self::err(
                    pos,
                    format!(
                        "expected a value (string, number, true, false, `{{` or `[`), found {}",
                        other.describe()
                    ),
                ))
            }
        };
        Ok(Value { pos, kind })
    }

    /// Elements up to `]`; `open` is the position of the `[`.
    fn array(&mut self, open: Pos, depth: usize) -> Result<ValueKind, ParseError> {
        let mut numbers: Vec<f64> = Vec::new();
        let mut values: Option<Vec<Value>> = None;
        let mut comma_ok = false;
        loop {
            let (tok, pos) = self.lex.next()?;
            match tok {
                Token::RBracket => {
                    return Ok(match values {
                        Some(v) => ValueKind::Array(v),
                        None => ValueKind::Numbers(numbers),
                    });
                }
                Token::Eof => {
                    return Err(Self::err(
                        pos,
                        format!("end of file inside the array opened at {open} (missing `]`)"),
                    ));
                }
                Token::Comma if comma_ok => comma_ok = false,
                Token::Number(n) if values.is_none() => {
                    numbers.push(n);
                    comma_ok = true;
                }
                tok => {
                    let v = self.value_from(tok, pos, depth)?;
                    let list = values.get_or_insert_with(|| {
                        // First non-number: give the numbers read so far
                        // their own values. They lose their exact positions,
                        // but nothing reports on elements of a mixed array.
                        numbers
                            .drain(..)
                            .map(|n| Value {
                                pos: open,
                                kind: ValueKind::Number(n),
                            })
                            .collect()
                    });
                    list.push(v);
                    comma_ok = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Vec<Member>, ParseError> {
        parse_document(s)
    }

    #[test]
    fn members_arrays_comments_and_optional_commas() {
        let doc = parse(
            "// head\nversion = 5\nclip = { name = \"a\\\"b\", n = -1.5e2, ok = true, }\n/* block\n */ v = [ [1 2], [3, 4] ]",
        )
        .unwrap();
        assert_eq!(doc.len(), 3);
        assert_eq!(doc[0].value.kind, ValueKind::Number(5.0));
        let ValueKind::Object(clip) = &doc[1].value.kind else {
            panic!()
        };
        assert_eq!(clip[0].value.kind, ValueKind::Str("a\"b".into()));
        assert_eq!(clip[1].value.kind, ValueKind::Number(-150.0));
        assert_eq!(clip[2].value.kind, ValueKind::Bool(true));
        let ValueKind::Array(v) = &doc[2].value.kind else {
            panic!()
        };
        assert_eq!(v[1].kind, ValueKind::Numbers(vec![3.0, 4.0]));
        assert_eq!(doc[2].key_pos, Pos { line: 5, col: 5 });
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("a = 1\nb 2").unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 3 });
        assert!(e.message.contains("expected `=`"), "{e}");
        let e = parse("a = \"abc\nb = 1").unwrap_err();
        assert_eq!(e.pos.line, 1);
        assert!(e.message.contains("unterminated string"), "{e}");
        let e = parse("a = [1 2\n").unwrap_err();
        assert!(e.message.contains("missing `]`"), "{e}");
        let e = parse("a = nan").unwrap_err();
        assert!(e.message.contains("NaN"), "{e}");
        let e = parse("a = 1.0f").unwrap_err();
        assert!(e.message.contains("malformed number"), "{e}");
        let e = parse("a = 1\na = 2").unwrap_err();
        assert!(e.message.contains("duplicate key"), "{e}");
        let e = parse("a = /* x").unwrap_err();
        assert!(e.message.contains("unterminated `/*`"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let s = format!("a = {}", "[".repeat(10_000));
        assert!(parse(&s).unwrap_err().message.contains("nesting"));
    }

    #[test]
    fn garbage_never_panics() {
        for s in [
            "",
            "=",
            "{",
            "}",
            "a",
            "a =",
            "\"",
            "a = \"\\u12",
            "a = -",
            "a = [,]",
            "a = {,}",
            "a = 1e",
            "+",
            "é = 1",
        ] {
            let _ = parse(s);
        }
        assert!(parse("").unwrap().is_empty());
    }
}
