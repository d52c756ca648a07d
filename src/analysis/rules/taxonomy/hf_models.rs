//! Hugging Face transformers model families, recognised by the class names of their
//! `nn.Module` spans, and whether transformers gives them an SDPA attention path (what decides
//! whether `attn_implementation="sdpa"` is advice that can be taken).

/// One transformers model family: its class-name prefix and its attention paths.
pub struct HfFamily {
    /// The prefix of every class of the family (`Llama` in `LlamaForCausalLM`, `LlamaAttention`).
    pub prefix: &'static str,
    /// `<prefix>PreTrainedModel._supports_sdpa` in transformers.
    pub sdpa: bool,
    /// Without SDPA: what to do instead (empty with SDPA).
    pub instead: &'static str,
}

/// Read from huggingface/transformers, `src/transformers/models/<model>/modeling_<model>.py`,
/// the `_supports_sdpa` attribute of each `<Family>PreTrainedModel` (PreTrainedModel's own
/// default is False): llama (commit 5dd4a63548857797727ae73eeb6a6e886ea02a3e), mistral and gpt2
/// (True); gpt_oss (6edf5b311854175ff83c59179b3360beca1ceffc: False, with flash and flex
/// attention True), nllb_moe (e6a20749cb0a882861b2828befc11f7498b9b51c: sdpa, flash and flex all
/// False), longformer (not set: its own sliding-window attention). A small list on purpose: a
/// family not here gets the generic advice, never a guess.
pub static HF_FAMILIES: &[HfFamily] = &[
    HfFamily { prefix: "Llama", sdpa: true, instead: "" },
    HfFamily { prefix: "Mistral", sdpa: true, instead: "" },
    HfFamily { prefix: "GPT2", sdpa: true, instead: "" },
    HfFamily {
        prefix: "GptOss",
        sdpa: false,
        instead: "its attention sinks have no SDPA kernel; load it with attn_implementation=\"flex_attention\", or on Hopper with the kernels hub's FlashAttention-3 that supports sinks (attn_implementation=\"kernels-community/vllm-flash-attn3\")",
    },
    HfFamily {
        prefix: "NllbMoe",
        sdpa: false,
        instead: "transformers marks it without SDPA, flash or flex attention, so it runs eager there; look for a newer transformers release that adds one, or serve it with a stack that fuses attention",
    },
    HfFamily {
        prefix: "Longformer",
        sdpa: false,
        instead: "its sliding-window attention is its own code with no SDPA or flash path; a newer long-context model with SDPA / flash support, or shorter windows, is the way out",
    },
];

/// The suffixes transformers puts after a family's prefix on its model and layer classes.
const HF_SUFFIXES: &[&str] = &[
    "ForCausalLM",
    "ForConditionalGeneration",
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForMaskedLM",
    "LMHeadModel",
    "Model",
    "DecoderLayer",
    "EncoderLayer",
    "Layer",
    "Block",
    "Attention",
    "SelfAttention",
    "SdpaAttention",
    "SdpaSelfAttention",
    "FlashAttention2",
];

/// The family and the class name of an `nn.Module` span's name (`nn.Module: LlamaModel_0`:
/// the profiler's prefix and the instance number dropped), when the class is one of a known
/// family's.
pub fn hf_family(module: &str) -> Option<(&'static HfFamily, &str)> {
    let name = module.strip_prefix("nn.Module: ").unwrap_or(module);
    let class = match name.rsplit_once('_') {
        Some((class, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => class,
        _ => name,
    };
    let family =
        HF_FAMILIES.iter().find(|f| class.strip_prefix(f.prefix).is_some_and(|rest| HF_SUFFIXES.contains(&rest)))?;
    Some((family, class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_their_class_names() {
        let (f, class) = hf_family("nn.Module: LlamaForCausalLM_0").unwrap();
        assert_eq!((f.prefix, f.sdpa, class), ("Llama", true, "LlamaForCausalLM"));
        assert_eq!(hf_family("nn.Module: GPT2LMHeadModel_3").unwrap().0.prefix, "GPT2");
        assert!(!hf_family("nn.Module: GptOssAttention_12").unwrap().0.sdpa);
        // Another family that shares a prefix, a user's own class, an unknown family: none.
        for name in
            ["nn.Module: MistralishModel_0", "nn.Module: LlamaBlockCustom_0", "nn.Module: Qwen2Model_0", "Llama"]
        {
            assert!(hf_family(name).is_none(), "{name}");
        }
    }
}
