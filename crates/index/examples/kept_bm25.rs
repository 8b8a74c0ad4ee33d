//! What the kept BM25 (`bm25.rs`) costs and saves on one index, query by query: FTS5's
//! own scoring, the kept path's first query (its token walks), and the kept path once
//! warm; and, once per connection, reading a version's row sizes. The answers of the
//! three are checked equal.
//!
//! `cargo run --release -p gitloom-index --example kept_bm25 -- STORE/.gitloom/index.db "query" …`

use std::path::Path;
use std::time::Instant;

use gitloom_index::{Index, KeptScoring, LexicalQuery};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: kept_bm25 INDEX.db QUERY…");
    let path = Path::new(&path);
    let open = |mode| {
        let (idx, _) = Index::open(path).expect("open the index");
        idx.set_kept_scoring(mode);
        idx
    };
    let query = |text: &str| LexicalQuery {
        text: text.to_owned(),
        limit: 50,
        decorate: Some(0),
        ..Default::default()
    };
    // A word in no file: the temporary tables and the tokenizer made, nothing walked.
    let absent = query("zzqqzz");
    for text in args {
        let q = query(&text);
        let fts = open(KeptScoring::Off);
        fts.lexical(&absent).expect("lexical");
        let t = Instant::now();
        let by_fts = fts.lexical(&q).expect("lexical");
        let fts_ms = ms(t);

        let kept = open(KeptScoring::Off);
        kept.lexical(&absent).expect("lexical");
        kept.set_kept_scoring(KeptScoring::Eager);
        let t = Instant::now();
        kept.lexical(&absent).expect("lexical");
        let stats_ms = ms(t);
        let t = Instant::now();
        let first = kept.lexical(&q).expect("lexical");
        let first_ms = ms(t);
        let t = Instant::now();
        let warm = kept.lexical(&q).expect("lexical");
        let warm_ms = ms(t);
        assert_eq!(by_fts, first, "{text}");
        assert_eq!(by_fts, warm, "{text}");
        println!(
            "{text:40} row sizes {stats_ms:5.2} ms | FTS5 {fts_ms:5.2} ms | kept: first {first_ms:5.2} ms, warm {warm_ms:5.2} ms"
        );
    }
}
