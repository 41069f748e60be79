//! The native `attention-lens` command.

/// Runs the command with `args` (without the program name) and returns the exit code.
pub fn run(_args: &[String]) -> i32 {
    0
}
