//! Opening a BERT WordPiece `tokenizer.json` without `from_file`'s generic parse.
//!
//! `tokenizers::Tokenizer::from_file` reads the model (its 30,522-entry vocabulary
//! included) into a generic `serde_json::Value` first, through a flattened tagged
//! enum, and builds the WordPiece from that: 29 % of a cold `gitloom retrieve`'s
//! samples under perf on the 10k store. With this module that command's query
//! embedding went from 76 to 58 ms (BENCHMARKS.md, "Session 9"). A file whose parts
//! are the plain BERT ones (WordPiece model, `BertNormalizer`, `BertPreTokenizer`,
//! `[CLS] $A [SEP]`) is read here into typed structs and the same tokenizer is
//! assembled through the crate's builders; any other file goes through `from_file`.
//! The test `the_fast_open_tokenizes_as_from_file` holds the two to the same ids.
//!
//! Not for: tokenizers of other families (BPE, Unigram), pairs of sequences, or
//! decoding; truncation and padding are set by the caller.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::{AddedToken, Tokenizer};

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    added_tokens: Vec<Added>,
    normalizer: Option<Normalizer>,
    pre_tokenizer: Option<Typed>,
    post_processor: Option<PostProcessor>,
    model: Model,
}

#[derive(Deserialize)]
struct Typed {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Added {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    #[serde(default)]
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

/// `TemplateProcessing`'s single-sequence template, as written in the file.
#[derive(Deserialize)]
struct PostProcessor {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    single: Vec<Piece>,
}

#[derive(Deserialize, PartialEq)]
enum Piece {
    SpecialToken { id: String, type_id: u32 },
    Sequence { id: String, type_id: u32 },
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: HashMap<String, u32>,
}

/// The tokenizer in `path`: assembled from typed parts when it is a plain BERT
/// WordPiece tokenizer, else read by `Tokenizer::from_file`.
pub(crate) fn open(path: &Path) -> Result<Tokenizer, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // A file these structs cannot read may still be a tokenizer the crate reads.
    let fast = serde_json::from_slice::<File>(&bytes)
        .ok()
        .and_then(|f| assemble(f).transpose());
    match fast {
        Some(t) => t.map_err(|e| format!("{}: {e}", path.display())),
        None => Tokenizer::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display())),
    }
}

/// The tokenizer `f` describes, or `None` when it is not a plain BERT one.
fn assemble(f: File) -> Result<Option<Tokenizer>, String> {
    let normalizer = match f.normalizer {
        Some(n) if n.kind == "BertNormalizer" => BertNormalizer::new(
            n.clean_text,
            n.handle_chinese_chars,
            n.strip_accents,
            n.lowercase,
        ),
        _ => return Ok(None),
    };
    if f.model.kind != "WordPiece" || f.pre_tokenizer.is_none_or(|p| p.kind != "BertPreTokenizer") {
        return Ok(None);
    }
    let Some(post) = f.post_processor.filter(|p| p.kind == "TemplateProcessing") else {
        return Ok(None);
    };
    let id_of = |token: &str| f.model.vocab.get(token).copied();
    let (Some(cls), Some(sep)) = (id_of("[CLS]"), id_of("[SEP]")) else {
        return Ok(None);
    };
    let bert_template = [
        Piece::SpecialToken {
            id: "[CLS]".into(),
            type_id: 0,
        },
        Piece::Sequence {
            id: "A".into(),
            type_id: 0,
        },
        Piece::SpecialToken {
            id: "[SEP]".into(),
            type_id: 0,
        },
    ];
    if post.single != bert_template {
        return Ok(None);
    }
    // Added tokens must keep the ids the file gives them, which is so when the
    // vocabulary holds them at those ids.
    if f.added_tokens
        .iter()
        .any(|a| id_of(&a.content) != Some(a.id))
    {
        return Ok(None);
    }
    let model = WordPiece::builder()
        .vocab(f.model.vocab.into_iter().collect::<ahash::AHashMap<_, _>>())
        .unk_token(f.model.unk_token)
        .continuing_subword_prefix(f.model.continuing_subword_prefix)
        .max_input_chars_per_word(f.model.max_input_chars_per_word)
        .build()
        .map_err(|e| e.to_string())?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer
        .with_normalizer(Some(normalizer))
        .with_pre_tokenizer(Some(BertPreTokenizer))
        .with_post_processor(Some(BertProcessing::new(
            ("[SEP]".to_owned(), sep),
            ("[CLS]".to_owned(), cls),
        )));
    let added = |a: &Added| {
        AddedToken::from(a.content.clone(), a.special)
            .single_word(a.single_word)
            .lstrip(a.lstrip)
            .rstrip(a.rstrip)
            .normalized(a.normalized)
    };
    let (special, plain): (Vec<&Added>, Vec<&Added>) =
        f.added_tokens.iter().partition(|a| a.special);
    tokenizer.add_special_tokens(&special.into_iter().map(added).collect::<Vec<_>>());
    tokenizer.add_tokens(&plain.into_iter().map(added).collect::<Vec<_>>());
    Ok(Some(tokenizer))
}

#[cfg(test)]
mod tests {
    use tokenizers::TruncationParams;

    use super::*;

    /// Every memory of the four probe personas and some hard cases, tokenized both ways.
    #[test]
    fn the_fast_open_tokenizes_as_from_file() {
        let dir = crate::minilm_dir();
        if !crate::MiniLm::is_installed(&dir) {
            assert!(
                std::env::var_os("CI").is_none(),
                "MiniLM is not installed under {} and CI is set",
                dir.display()
            );
            println!("skipped: MiniLM not installed");
            return;
        }
        let path = dir.join("tokenizer.json");
        let bytes = std::fs::read(&path).expect("read tokenizer.json");
        let file: File = serde_json::from_slice(&bytes).expect("typed parts");
        let mut fast = assemble(file)
            .expect("assemble")
            .expect("a plain BERT tokenizer");
        let mut slow = Tokenizer::from_file(&path).expect("from_file");
        for t in [&mut fast, &mut slow] {
            t.with_truncation(Some(TruncationParams {
                max_length: 256,
                ..TruncationParams::default()
            }))
            .expect("truncation");
            t.with_padding(None);
        }
        let mut texts: Vec<String> = [
            "who pays my salary",
            "[CLS] a literal [SEP] and [MASK] in the text [PAD] [UNK]",
            "Naïve café déjà vu, ÀÉÎÕÜ and straße",
            "中文字符 mixed with 日本語 and 한국어",
            "don't, can't; e-mail: a.b@example.com (tel. +1-555-0100) #tag ##ing",
            "emoji 🐈‍⬛ 👍🏽 and \u{0}control\u{7}chars\tand\u{fffd}",
            "",
            "   ",
        ]
        .map(String::from)
        .to_vec();
        texts.push("a".repeat(150));
        texts.push("word ".repeat(400));
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        for persona in ["probe", "probe-sre", "probe-teacher", "probe-nurse"] {
            let root = data.join(persona).join("memories");
            let mut stack = vec![root];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if let Ok(s) = std::fs::read_to_string(&p) {
                        texts.push(s);
                    }
                }
            }
        }
        assert!(
            texts.len() > 100 || std::env::var_os("CI").is_none(),
            "the probe memories were not found under {}",
            data.display()
        );
        for t in &texts {
            let a = fast.encode_fast(t.as_str(), true).expect("fast");
            let b = slow.encode_fast(t.as_str(), true).expect("slow");
            assert_eq!(a.get_ids(), b.get_ids(), "{t:?}");
        }
    }
}
