//! Chunking long text for a model's window.

use gitloom_embed::{chunk, max_words_for_tokens};

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

#[test]
fn short_text_is_one_unchanged_piece() {
    assert_eq!(
        chunk("  Hello there. Bye.\n", 10),
        vec!["  Hello there. Bye.\n".to_string()]
    );
    assert!(chunk("   \n\n ", 10).is_empty());
}

#[test]
fn splits_on_sentences_and_paragraphs_within_budget() {
    let text = "Alice works at Orbital AI. She is an ML engineer! Does she like it? Yes.\n\n\
                Her cat is called Mellob and sleeps a lot.\n- likes fish\n- dislikes rain";
    let pieces = chunk(text, 9);
    assert!(pieces.iter().all(|p| words(p) <= 9), "{pieces:?}");
    assert_eq!(
        pieces,
        vec![
            "Alice works at Orbital AI.",
            "She is an ML engineer! Does she like it?",
            "Yes.",
            "Her cat is called Mellob and sleeps a lot.",
            "- likes fish\n- dislikes rain",
        ]
    );
    // Nothing is lost: the words of the pieces are the words of the text.
    let all: Vec<&str> = pieces.iter().flat_map(|p| p.split_whitespace()).collect();
    assert_eq!(all, text.split_whitespace().collect::<Vec<_>>());
}

#[test]
fn an_overlong_sentence_is_cut_between_words() {
    let text = (0..25)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
        + ". End.";
    let pieces = chunk(&text, 10);
    assert!(pieces.iter().all(|p| words(p) <= 10), "{pieces:?}");
    assert_eq!(pieces.len(), 4);
    assert_eq!(pieces[3], "End.");
}

#[test]
fn decimals_and_abbreviation_dots_do_not_end_sentences() {
    let pieces = chunk(
        "Pi is 3.14 roughly and e is 2.71 roughly. Next one here.",
        9,
    );
    assert_eq!(
        pieces,
        vec![
            "Pi is 3.14 roughly and e is 2.71 roughly.",
            "Next one here."
        ]
    );
}

#[test]
fn word_budget_from_tokens() {
    assert_eq!(max_words_for_tokens(256), 195);
    assert_eq!(max_words_for_tokens(0), 1);
}
