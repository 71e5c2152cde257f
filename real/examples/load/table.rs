//! A table of strings, printed aligned for a terminal or as Markdown.

pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Columns padded to their widest cell; numbers read best right-aligned,
    /// so every column but the first is.
    pub fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain(std::iter::once(&self.headers[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(c, &w)| {
                    let cell = cells.get(c).map(String::as_str).unwrap_or("");
                    if c == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }

    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.headers);
        let rule: Vec<String> = (0..self.headers.len())
            .map(|c| if c == 0 { "---" } else { "---:" }.to_string())
            .collect();
        out += &line(&rule);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_aligns_and_markdown_has_a_rule() {
        let mut t = Table::new(&["target", "ops/s"]);
        t.row(vec!["serve".into(), "12345".into()]);
        t.row(vec!["real 3.8".into(), "7".into()]);
        assert_eq!(
            t.text(),
            "target    ops/s\nserve     12345\nreal 3.8      7\n"
        );
        assert_eq!(
            t.markdown(),
            "| target | ops/s |\n| --- | ---: |\n| serve | 12345 |\n| real 3.8 | 7 |\n"
        );
    }
}
