//! An agent config file, YAML, JSON or TOML (the first byte picks): read
//! without failing, and an error that says where.

#![no_main]

use hooks_runtime::config::{AgentConfig, ConfigFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = match first % 3 {
        0 => ConfigFormat::Yaml,
        1 => ConfigFormat::Json,
        _ => ConfigFormat::Toml,
    };
    match AgentConfig::parse(text, format, "fuzzed.config", None) {
        Ok(config) => {
            let _ = format!("{config:?}");
        }
        Err(errors) => {
            let message = errors.to_string();
            assert!(!message.is_empty(), "an error that says nothing");
        }
    }
});
