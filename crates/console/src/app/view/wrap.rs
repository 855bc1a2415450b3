//! Word-wrapping as the panes count it (greedy, in chars, a word longer than the width broken
//! across rows): the layout and the group matrix size their rows by it. A leaf.

/// Rows `text` takes when word-wrapped greedily at `width` columns (a word longer than the
/// width is broken across rows): [`wrap`]'s count.
pub fn wrapped_rows(text: &str, width: usize) -> usize {
    wrap(text, width).len()
}

/// `text` word-wrapped greedily at `width` columns (counted in chars), a word longer than the
/// width broken across rows; at least one row.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let (mut rows, mut current) = (Vec::new(), String::new());
    let mut used = 0;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if used > 0 && used + 1 + len <= width {
            current.push(' ');
            current.push_str(word);
            used += 1 + len;
            continue;
        }
        if used > 0 {
            rows.push(std::mem::take(&mut current));
        }
        let chars: Vec<char> = word.chars().collect();
        let mut chunks = chars.chunks(width).peekable();
        while let Some(chunk) = chunks.next() {
            current.extend(chunk);
            used = chunk.len();
            if chunks.peek().is_some() {
                rows.push(std::mem::take(&mut current));
            }
        }
    }
    rows.push(current);
    rows
}
