//! The built-in adapters, embedded in the binary from `adapters/*.yaml`.

/// (file name, YAML text) of every built-in adapter, in detection order.
pub(crate) const BUILTIN: &[(&str, &str)] = &[
    (
        "claude-code.yaml",
        include_str!("../../adapters/claude-code.yaml"),
    ),
    (
        "opencode.yaml",
        include_str!("../../adapters/opencode.yaml"),
    ),
];
