//! Splitting long text into pieces a model's window can hold.
//!
//! Tokens are approximated by words: one word ≈ 1.3 word-piece tokens for English
//! prose ([`max_words_for_tokens`]). Simple, deterministic and a little conservative.

/// Words per token estimate used by [`max_words_for_tokens`].
const TOKENS_PER_WORD: f32 = 1.3;

/// The word budget for a window of `max_tokens` tokens (tokens ≈ words × 1.3), leaving
/// room for the model's two special tokens; at least 1.
pub fn max_words_for_tokens(max_tokens: usize) -> usize {
    ((max_tokens.saturating_sub(2) as f32 / TOKENS_PER_WORD) as usize).max(1)
}

/// Splits `text` into pieces of at most `max_words` words, breaking at paragraph
/// (blank line) and sentence (`.`, `!`, `?` followed by white space; line ends) boundaries
/// and packing consecutive sentences into a piece while they fit; a single sentence
/// longer than the budget is cut between words. A text that fits comes back unchanged as
/// one piece; pieces are trimmed substrings of `text`; blank text gives no pieces.
pub fn chunk(text: &str, max_words: usize) -> Vec<String> {
    let max_words = max_words.max(1);
    if text.trim().is_empty() {
        return Vec::new();
    }
    if words(text) <= max_words {
        return vec![text.to_string()];
    }
    let mut out = Vec::new();
    for para in paragraphs(text) {
        // Pack sentences of this paragraph.
        let mut start: Option<usize> = None; // byte offset in para of the open piece
        let mut end = 0;
        let mut count = 0;
        for (s, e) in sentences(para) {
            let n = words(&para[s..e]);
            if n > max_words {
                if let Some(st) = start.take() {
                    push(&mut out, &para[st..end]);
                }
                count = 0;
                split_words(&para[s..e], max_words, &mut out);
                continue;
            }
            if start.is_some() && count + n > max_words {
                if let Some(st) = start.take() {
                    push(&mut out, &para[st..end]);
                }
                count = 0;
            }
            start.get_or_insert(s);
            end = e;
            count += n;
        }
        if let Some(st) = start {
            push(&mut out, &para[st..end]);
        }
    }
    out
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

fn push(out: &mut Vec<String>, piece: &str) {
    let p = piece.trim();
    if !p.is_empty() {
        out.push(p.to_string());
    }
}

/// Paragraphs: separated by lines that are blank.
fn paragraphs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            if !text[start..pos].trim().is_empty() {
                out.push(&text[start..pos]);
            }
            start = pos + line.len();
        }
        pos += line.len();
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// Sentence spans (byte ranges) of a paragraph: ends after `.`/`!`/`?` followed by white
/// space, and at line ends (list items, headings).
fn sentences(p: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = p.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_ws = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
        let end = match c {
            '.' | '!' | '?' if next_ws => Some(i + c.len_utf8()),
            '\n' => Some(i),
            _ => None,
        };
        if let Some(e) = end {
            if !p[start..e].trim().is_empty() {
                out.push((start, e));
            }
            start = e;
        }
    }
    if !p[start..].trim().is_empty() {
        out.push((start, p.len()));
    }
    out
}

fn split_words(s: &str, max_words: usize, out: &mut Vec<String>) {
    let ws: Vec<&str> = s.split_whitespace().collect();
    for group in ws.chunks(max_words) {
        out.push(group.join(" "));
    }
}
