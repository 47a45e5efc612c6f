//! Located diagnostics: every error of a program names its file, line and
//! column, the authored node it concerns (`machine 'm' / state 's'`,
//! `layer 'l'`, ...) and, for a name that resolves to nothing, the nearest
//! known name ("did you mean").

use std::fmt;

/// One problem in a program asset.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when the problem has no single place (e.g. a cycle).
    pub line: u32,
    pub column: u32,
    /// The authored node: `layer 'upper_body'`, `machine 'm' / transition 3`.
    pub node: String,
    pub message: String,
    pub suggestion: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if !self.node.is_empty() {
            write!(f, "{}: ", self.node)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean '{s}'?)")?;
        }
        Ok(())
    }
}

/// Every diagnostic of one failed parse or compile, in source order.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", render(.0))]
pub struct ProgramErrors(pub Vec<Diagnostic>);

fn render(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Maps byte offsets of one source text to 1-based line and column.
#[derive(Clone, Debug)]
pub struct SourceMap {
    pub file: String,
    line_starts: Vec<usize>,
}

impl SourceMap {
    pub fn new(file: &str, text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceMap {
            file: file.to_string(),
            line_starts,
        }
    }

    /// (line, column), both 1-based; column counts bytes.
    pub fn locate(&self, offset: usize) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let col = offset - self.line_starts[line - 1] + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }

    pub fn diag(
        &self,
        offset: usize,
        node: impl Into<String>,
        message: impl Into<String>,
    ) -> Diagnostic {
        let (line, column) = self.locate(offset);
        Diagnostic {
            file: self.file.clone(),
            line,
            column,
            node: node.into(),
            message: message.into(),
            suggestion: None,
        }
    }
}

/// The known name nearest to `name` by edit distance, if it is close
/// enough to be a plausible typo (at most a third of the longer name,
/// at least one edit), case-insensitively.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = edit_distance(&lower, &k.to_lowercase());
        let limit = (name.chars().count().max(k.chars().count()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k.to_string())
}

/// Edit distance over chars with adjacent transpositions counted as one
/// edit (optimal string alignment), so `wlak` is one edit from `walk`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_near_misses_only() {
        assert_eq!(
            did_you_mean("wlak", ["walk", "run"]).as_deref(),
            Some("walk")
        );
        assert_eq!(
            did_you_mean("Spine", ["spine1", "Hips"]).as_deref(),
            Some("spine1")
        );
        assert_eq!(did_you_mean("zzz", ["walk", "run"]), None);
    }

    #[test]
    fn lines_and_columns() {
        let m = SourceMap::new("f.toml", "a = 1\nbb = 2\n");
        assert_eq!(m.locate(0), (1, 1));
        assert_eq!(m.locate(6), (2, 1));
        assert_eq!(m.locate(8), (2, 3));
    }
}
