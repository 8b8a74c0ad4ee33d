//! The encoder's weights: `config.json` read and checked, every tensor of
//! `model.safetensors` located by name with its dtype and shape checked, and the f32
//! data viewed in place in the mapped file (or copied once where it cannot be: a
//! big-endian machine, or a data section not 4-byte aligned).

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::quant::QLinear;
use crate::EmbedError;
use crate::mapped::MappedFile;

/// The parts of a BERT `config.json` the encoder uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub(crate) type_vocab_size: usize,
    pub(crate) layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub(crate) hidden_act: String,
    #[serde(default = "default_position")]
    pub(crate) position_embedding_type: String,
}

fn default_type_vocab() -> usize {
    2
}
fn default_act() -> String {
    "gelu".into()
}
fn default_position() -> String {
    "absolute".into()
}

/// A linear layer: `weight` is `[out, in]` row-major (PyTorch's layout), `bias` `[out]`.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    pub(crate) weight: Range<usize>,
    pub(crate) bias: Range<usize>,
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
    /// The weights in i8 ([`Linear::int8`]), quantised on first use.
    int8: OnceLock<Option<QLinear>>,
}

impl Linear {
    /// This layer's weights (within `w`, [`BertWeights::data`]) quantised to i8 per
    /// output row, once per process: ~12 ms for all of MiniLM's, paid by the first
    /// bulk job, never by a query (see [`super::Precision`]). `None` for a shape the
    /// kernel does not pack (the layer then runs in f32).
    pub(crate) fn int8(&self, w: &[f32]) -> Option<&QLinear> {
        self.int8
            .get_or_init(|| QLinear::new(&w[self.weight.clone()], self.inputs, self.outputs))
            .as_ref()
    }
}

/// A layer norm's scale and shift.
#[derive(Debug, Clone)]
pub(crate) struct Norm {
    pub(crate) weight: Range<usize>,
    pub(crate) bias: Range<usize>,
}

/// One transformer layer.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub(crate) query: Linear,
    pub(crate) key: Linear,
    pub(crate) value: Linear,
    pub(crate) attn_out: Linear,
    pub(crate) attn_norm: Norm,
    pub(crate) intermediate: Linear,
    pub(crate) output: Linear,
    pub(crate) out_norm: Norm,
}

/// Where the f32 data lives.
enum Data {
    /// In the mapped file, from this byte offset to the end.
    Mapped { file: MappedFile, start: usize },
    /// Copied (big-endian machine or misaligned data section).
    Owned(Vec<f32>),
}

/// The encoder's weights. Every range indexes [`BertWeights::data`] (in f32s).
pub(crate) struct BertWeights {
    pub(crate) config: BertConfig,
    data: Data,
    pub(crate) word: Range<usize>,
    pub(crate) position: Range<usize>,
    pub(crate) token_type: Range<usize>,
    pub(crate) embed_norm: Norm,
    pub(crate) layers: Vec<Layer>,
}

impl std::fmt::Debug for BertWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertWeights")
            .field("config", &self.config)
            .field("mapped", &matches!(self.data, Data::Mapped { .. }))
            .finish()
    }
}

impl BertWeights {
    /// Reads `config.json` and maps `model.safetensors`; checks that every tensor the
    /// encoder needs is there, f32, of the shape the config implies.
    pub(crate) fn open(config_path: &Path, weights_path: &Path) -> Result<BertWeights, EmbedError> {
        let text = std::fs::read(config_path).map_err(EmbedError::io(config_path, "read"))?;
        let config: BertConfig = serde_json::from_slice(&text)
            .map_err(|e| EmbedError::invalid(config_path, format!("not a BERT config: {e}")))?;
        check_config(&config).map_err(|m| EmbedError::invalid(config_path, m))?;
        let file = MappedFile::open(weights_path, false)?;
        let bad = |m: String| EmbedError::invalid(weights_path, m);
        let (header, meta) = SafeTensors::read_metadata(file.bytes())
            .map_err(|e| bad(format!("not a safetensors file: {e}")))?;
        let start = 8 + header;
        let t = Tensors {
            meta: &meta,
            config: &config,
        };
        let (h, inter) = (config.hidden_size, config.intermediate_size);
        let norm = |t: &Tensors<'_>, p: &str| -> Result<Norm, String> {
            Ok(Norm {
                weight: t.get(&format!("{p}.weight"), &[h])?,
                bias: t.get(&format!("{p}.bias"), &[h])?,
            })
        };
        let word = t
            .get("embeddings.word_embeddings.weight", &[config.vocab_size, h])
            .map_err(bad)?;
        let position = t
            .get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )
            .map_err(bad)?;
        let token_type = t
            .get(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, h],
            )
            .map_err(bad)?;
        let embed_norm = norm(&t, "embeddings.LayerNorm").map_err(bad)?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let layer = (|| -> Result<Layer, String> {
                Ok(Layer {
                    query: t.linear(&format!("{p}.attention.self.query"), h, h)?,
                    key: t.linear(&format!("{p}.attention.self.key"), h, h)?,
                    value: t.linear(&format!("{p}.attention.self.value"), h, h)?,
                    attn_out: t.linear(&format!("{p}.attention.output.dense"), h, h)?,
                    attn_norm: norm(&t, &format!("{p}.attention.output.LayerNorm"))?,
                    intermediate: t.linear(&format!("{p}.intermediate.dense"), h, inter)?,
                    output: t.linear(&format!("{p}.output.dense"), inter, h)?,
                    out_norm: norm(&t, &format!("{p}.output.LayerNorm"))?,
                })
            })()
            .map_err(bad)?;
            layers.push(layer);
        }
        let data = if cfg!(target_endian = "little")
            && bytemuck::try_cast_slice::<u8, f32>(&file.bytes()[start..]).is_ok()
        {
            Data::Mapped { file, start }
        } else {
            let v = file.bytes()[start..]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            Data::Owned(v)
        };
        Ok(BertWeights {
            config,
            data,
            word,
            position,
            token_type,
            embed_norm,
            layers,
        })
    }

    /// Every f32 of the weights; the ranges index it.
    pub(crate) fn data(&self) -> &[f32] {
        match &self.data {
            // Checked in `open`: little-endian, and the section casts.
            Data::Mapped { file, start } => {
                bytemuck::try_cast_slice(&file.bytes()[*start..]).unwrap_or(&[])
            }
            Data::Owned(v) => v,
        }
    }

    /// Whether the weights are read in place from the mapped file.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.data, Data::Mapped { .. })
    }
}

fn check_config(c: &BertConfig) -> Result<(), String> {
    if c.hidden_act != "gelu" {
        return Err(format!(
            "hidden_act {:?} is not supported (only \"gelu\")",
            c.hidden_act
        ));
    }
    if c.position_embedding_type != "absolute" {
        return Err(format!(
            "position_embedding_type {:?} is not supported (only \"absolute\")",
            c.position_embedding_type
        ));
    }
    if c.num_attention_heads == 0 || !c.hidden_size.is_multiple_of(c.num_attention_heads) {
        return Err(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            c.hidden_size, c.num_attention_heads
        ));
    }
    if c.vocab_size == 0 || c.max_position_embeddings == 0 || c.type_vocab_size == 0 {
        return Err(
            "vocab_size, max_position_embeddings and type_vocab_size must be positive".into(),
        );
    }
    Ok(())
}

/// Looks tensors up in a safetensors header.
struct Tensors<'a> {
    meta: &'a safetensors::tensor::Metadata,
    config: &'a BertConfig,
}

impl Tensors<'_> {
    /// The f32 range of tensor `name`, which must be f32 of exactly `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Range<usize>, String> {
        let info = self
            .meta
            .info(name)
            .ok_or_else(|| format!("tensor {name} is missing"))?;
        if info.dtype != Dtype::F32 {
            return Err(format!("tensor {name} is {:?}, expected F32", info.dtype));
        }
        if info.shape != shape {
            return Err(format!(
                "tensor {name} has shape {:?}, expected {shape:?} (config: hidden {}, layers {})",
                info.shape, self.config.hidden_size, self.config.num_hidden_layers
            ));
        }
        let (s, e) = info.data_offsets;
        if !s.is_multiple_of(4) || !e.is_multiple_of(4) {
            return Err(format!("tensor {name} is not 4-byte aligned"));
        }
        Ok(s / 4..e / 4)
    }

    fn linear(&self, p: &str, inputs: usize, outputs: usize) -> Result<Linear, String> {
        Ok(Linear {
            weight: self.get(&format!("{p}.weight"), &[outputs, inputs])?,
            bias: self.get(&format!("{p}.bias"), &[outputs])?,
            inputs,
            outputs,
            int8: OnceLock::new(),
        })
    }
}
