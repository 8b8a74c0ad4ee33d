//! Prints what the offline extractor makes of a sessions file (for reading):
//! `cargo run -p gitloom-cortex --example extract_dump -- FILE [SESSION]`.
use gitloom_cortex::{ExtractContext, Extractor, OfflineExtractor, parse_sessions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let file = args.next().ok_or("usage: extract_dump FILE [SESSION]")?;
    let only = args.next();
    let sessions = parse_sessions(&std::fs::read_to_string(&file)?)?;
    let run_text: String = sessions
        .iter()
        .flat_map(|s| s.user_messages().map(|(_, m)| m.content.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    let ctx = ExtractContext {
        run_text: std::sync::Arc::new(gitloom_cortex::RunText::new(run_text)),
        ..Default::default()
    };
    for s in &sessions {
        if only.as_ref().is_some_and(|o| *o != s.id) {
            continue;
        }
        for f in OfflineExtractor.extract(s, &ctx)? {
            println!(
                "{} m{:?} [{}/{}] subject={} title={:?}\n    body: {}\n    cues: {:?}\n    entities: {:?}",
                s.id,
                f.messages,
                f.tier,
                f.topic,
                f.subject,
                f.title,
                f.body,
                f.cues,
                f.entities
                    .iter()
                    .map(|e| format!("{}:{}", e.name, e.kind.clone().unwrap_or_default()))
                    .collect::<Vec<_>>()
            );
        }
    }
    Ok(())
}
