//! Reading YAML, JSON or TOML into one JSON value.

use std::path::Path;

use serde_json::Value;

use super::limits;

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

    /// Reads the file at `path` into a JSON value, its format from its
    /// extension, under the limits an agent config file has (1 MiB, YAML
    /// nesting): for files that sit beside an agent config, such as a table
    /// of policy test cases. The error says what is wrong with the file.
    pub fn read(path: &Path) -> Result<Value, String> {
        let format = Self::from_path(path)
            .ok_or("unknown file format: name the file .yaml, .yml, .json or .toml")?;
        let text = limits::read_capped(path)?;
        if format == ConfigFormat::Yaml {
            limits::check_yaml_nesting(&text)?;
        }
        format
            .parse(&text)
            .map_err(|error| format!("syntax error: {error}"))
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
