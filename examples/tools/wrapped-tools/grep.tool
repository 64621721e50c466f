Search file contents using grep. The working directory is the project directory by default. Pass grep's options, the pattern and the files or directories to search as separate strings. Common usage: ["-rn", "TODO", "src/"] to find TODO with line numbers under src, ["-rl", "-e", "func main", "."] to list the files that contain "func main", or ["-c", "error", "log.txt"] to count matching lines. grep exits with status 1 when nothing matches, which is reported as an error with empty output.

@title Search File Contents
@name grep
@wrapped run_command
@command grep {arguments}
@param arguments {array<string>} [required] Array of strings that will be passed to grep: options, the pattern, then paths
