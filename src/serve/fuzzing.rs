//! Entry points for the fuzz targets in `fuzz/`, compiled only with
//! `--cfg fuzzing`: the decoders of hook input and of the server's answer
//! that `hook-client` reshapes for Codex, which are not public otherwise.

use super::client::ClientAnswer;

/// Reads a hook input body as `hooks serve` does: `Err` says why it is
/// refused.
pub fn hook_input(body: &[u8]) -> Result<(), String> {
    super::input::HookInput::parse(body).map(|_| ())
}

/// What `hook-client --client codex` prints for the hook `input`, given
/// the server's `answer`.
pub fn codex_answer(input: &[u8], answer: ClientAnswer) -> ClientAnswer {
    super::codex::answer(input, answer)
}

/// The hook input `hook-client --client codex` sends the server for
/// Codex's `input`.
pub fn codex_request(input: Vec<u8>) -> Vec<u8> {
    super::codex::request(input)
}
