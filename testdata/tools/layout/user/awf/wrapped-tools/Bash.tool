@name Bash
@wrapped shell
