//! Words: the one word splitter of the workspace.
//!
//! Every reader of text — the lexical arm's query terms, query shape, relative dates,
//! answer types, entity lookup and the ingestion extractor — splits with [`words`],
//! so a word means the same thing everywhere: a maximal run of letters and digits
//! (as SQLite FTS5's `unicode61` tokenizer sees it, so a query term and an indexed
//! term agree), folded to lowercase ASCII where a folding exists (`Pádraig` →
//! `padraig`, as `remove_diacritics 2` folds it in the index).
//!
//! English contractions and the possessive stay on their word as a [`Word::clitic`]
//! (`what's`, `don't`, `Friday's`, `I've`) instead of becoming words of their own,
//! so a reader that cares ("what's" is a question form, "Friday's" a weekday) asks
//! for it and one that does not never sees a stray `s`. An apostrophe before
//! anything else separates words (`O'Shea` → `o`, `shea`), as it does in the index.
//!
//! Also here: the stopwords that never become search terms ([`is_stopword`]) and the
//! content terms of a text ([`content_terms`]).

/// Apostrophes that join a clitic: ASCII and the typographic right quote.
const APOSTROPHES: [char; 2] = ['\'', '’'];

/// What may follow an apostrophe and stay on the word before it.
const CLITICS: &[&str] = &["s", "t", "d", "ll", "ve", "re", "m"];

/// One word of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'a> {
    /// The letters and digits as written.
    pub raw: &'a str,
    /// Byte offset of `raw` in the text.
    pub start: usize,
    /// Lowercase, diacritics folded; never empty.
    pub norm: String,
    /// The contraction or possessive joined to it by an apostrophe, lowercase
    /// (`what's` → `s`, `don't` → `t`, `we'll` → `ll`).
    pub clitic: Option<String>,
}

impl Word<'_> {
    /// Byte offset just past the word (its clitic excluded).
    pub fn end(&self) -> usize {
        self.start + self.raw.len()
    }

    /// The word with its clitic, as one would read it: `what's`, `don't`.
    pub fn with_clitic(&self) -> String {
        match &self.clitic {
            Some(c) => format!("{}'{c}", self.norm),
            None => self.norm.clone(),
        }
    }

    /// Whether the word is written with a capital first letter.
    pub fn capitalised(&self) -> bool {
        self.raw.chars().next().is_some_and(char::is_uppercase)
    }
}

/// The folded form of a run of letters and digits: lowercase, and a Latin letter
/// with a diacritic as its base letter (`é` → `e`, `ø` → `o`), which is what the
/// index's tokenizer does. Other scripts are only lowercased: the index keeps
/// them as written, so transliterating them here would match nothing.
fn fold(raw: &str) -> String {
    if raw.is_ascii() {
        return raw.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let latin =
            ('\u{00C0}'..='\u{024F}').contains(&c) || ('\u{1E00}'..='\u{1EFF}').contains(&c);
        let base = deunicode::deunicode_char(c)
            .filter(|_| latin)
            .map(|t| {
                t.chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .collect::<String>()
            })
            .filter(|t| !t.is_empty());
        match base {
            Some(t) => out.push_str(&t.to_ascii_lowercase()),
            None => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// The words of `text`, in order.
pub fn words(text: &str) -> Vec<Word<'_>> {
    let mut out: Vec<Word<'_>> = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !c.is_alphanumeric() {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        let raw = &text[start..end];
        let mut word = Word {
            raw,
            start,
            norm: fold(raw),
            clitic: None,
        };
        // A clitic: an apostrophe, then one of CLITICS, then no more letters.
        if let Some(&(a, ap)) = chars.peek()
            && APOSTROPHES.contains(&ap)
        {
            let after = a + ap.len_utf8();
            let tail: String = text[after..]
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .collect();
            let lower = tail.to_lowercase();
            if CLITICS.contains(&lower.as_str()) {
                chars.next();
                for _ in 0..tail.chars().count() {
                    chars.next();
                }
                word.clitic = Some(lower);
            }
        }
        out.push(word);
    }
    out
}

/// The folded words of `text` (clitics dropped), in order.
pub fn norms(text: &str) -> Vec<String> {
    words(text).into_iter().map(|w| w.norm).collect()
}

/// Words that never become search terms: articles, auxiliaries, pronouns,
/// interrogatives, common prepositions and conjunctions, and the stems that
/// contractions leave (`don`, `isn`). `not`/`no` too: a bag of words cannot express
/// negation, and as terms they would only match every memory that contains them.
const STOPWORDS: &[&str] = &[
    // articles, determiners
    "a", "an", "the", "some", "any", "all", "each", "every", "other", "such",
    // auxiliaries
    "do", "does", "did", "doing", "done", "is", "am", "are", "was", "were", "be", "been", "being",
    "have", "has", "had", "having", "will", "would", "can", "could", "should", "shall", "may",
    "might", "must", "get", "got", // pronouns
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "we", "us", "our",
    "ours", "he", "him", "his", "she", "her", "hers", "it", "its", "itself", "they", "them",
    "their", "theirs", "this", "that", "these", "those", "there", "here",
    // interrogatives
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
    // prepositions, conjunctions
    "of", "in", "on", "at", "to", "for", "with", "from", "by", "about", "as", "into", "onto", "and",
    "or", "but", "if", "than", "then", "so", "not", "no", "nor", "also", "just", "very", "too",
    "up", "out", "over",
    // adverbs of discourse, in the common English lists (NLTK's): "who's X again"
    // asks to be told again, it names nothing a memory holds
    "again",
    // what contractions leave once split (what's → what s, don't → don t, I've → i ve)
    "s", "t", "d", "ll", "ve", "re", "m", "don", "doesn", "didn", "isn", "aren", "wasn", "weren",
    "won", "wouldn", "cannot", "haven", "hasn", "hadn", "shouldn", "couldn",
    // the same contractions typed without their apostrophe ("whats", "im", "dont");
    // not those that spell another word ("ill", "id", "well", "shell", "its" is above)
    "whats", "whos", "wheres", "whens", "hows", "whys", "thats", "theres", "im", "ive", "youre",
    "youve", "theyre", "weve", "cant", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt",
    "werent", "wont", "wouldnt", "shouldnt", "couldnt", "mustnt", "havent", "hasnt", "hadnt",
];

/// True for a folded word that never becomes a search term (single letters too).
pub fn is_stopword(norm: &str) -> bool {
    STOPWORDS.contains(&norm)
        || (norm.chars().count() == 1 && !norm.chars().all(|c| c.is_ascii_digit()))
}

/// The content terms of `text`: folded words that are not stopwords, each once, in
/// order of first occurrence.
pub fn content_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        if !is_stopword(&w.norm) && !out.contains(&w.norm) {
            out.push(w.norm);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<(String, Option<String>)> {
        words(text)
            .into_iter()
            .map(|w| (w.norm, w.clitic))
            .collect()
    }

    #[test]
    fn words_are_runs_of_letters_and_digits_folded() {
        assert_eq!(
            norms("Pádraig met Zoë at gw-partner, sub-60 (k8s)!"),
            [
                "padraig", "met", "zoe", "at", "gw", "partner", "sub", "60", "k8s"
            ]
        );
        let w = &words("  Hi Léa")[1];
        assert_eq!((w.raw, w.start, w.end()), ("Léa", 5, 9));
        assert!(w.capitalised());
    }

    #[test]
    fn contractions_and_possessives_stay_on_their_word() {
        assert_eq!(
            split("what's Friday’s plan? I've don't"),
            [
                ("what".into(), Some("s".into())),
                ("friday".into(), Some("s".into())),
                ("plan".into(), None),
                ("i".into(), Some("ve".into())),
                ("don".into(), Some("t".into())),
            ]
        );
        assert_eq!(words("what's")[0].with_clitic(), "what's");
        // Not a clitic: the apostrophe separates, as in the index.
        assert_eq!(norms("Pádraig O'Shea"), ["padraig", "o", "shea"]);
        assert_eq!(norms("rock'n'roll"), ["rock", "n", "roll"]);
        assert_eq!(split("it's'"), [("it".into(), Some("s".into()))]);
    }

    #[test]
    fn content_terms_drop_stopwords_and_repeats() {
        assert_eq!(content_terms("Where do I work? Work!"), ["work"]);
        assert_eq!(content_terms("what's hana's email"), ["hana", "email"]);
        assert_eq!(content_terms("who is my 2nd cousin, I"), ["2nd", "cousin"]);
        assert!(content_terms("what is it?").is_empty());
        assert!(!is_stopword("7"));
        assert_eq!(content_terms("whats the plan, im off"), ["plan", "off"]);
    }

    #[test]
    fn text_that_is_not_latin_is_kept() {
        assert_eq!(norms("東京 in Ελλάδα"), ["東京", "in", "ελλάδα"]);
        assert!(words("— … !?").is_empty());
    }
}
