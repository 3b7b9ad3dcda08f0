use hooks::prelude::*;

#[pre_tool_use]
struct NotAFunction;

fn main() {}
