//! Reading YAML, JSON or TOML into one JSON value.

use std::path::Path;

use serde_json::Value;

/// A config file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    /// `.yaml` / `.yml`.
    Yaml,
    /// `.json`.
    Json,
    /// `.toml`.
    Toml,
}

impl ConfigFormat {
    /// The format a file's extension names, if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "yaml" | "yml" => Some(ConfigFormat::Yaml),
            "json" => Some(ConfigFormat::Json),
            "toml" => Some(ConfigFormat::Toml),
            _ => None,
        }
    }

    /// Parses `text` into a JSON value; the error says where the syntax broke.
    pub(crate) fn parse(self, text: &str) -> Result<Value, String> {
        match self {
            ConfigFormat::Yaml => yaml_serde::from_str::<Value>(text).map_err(|e| e.to_string()),
            ConfigFormat::Json => serde_json::from_str::<Value>(text).map_err(|e| e.to_string()),
            ConfigFormat::Toml => toml::from_str::<Value>(text).map_err(|e| e.to_string()),
        }
    }
}
