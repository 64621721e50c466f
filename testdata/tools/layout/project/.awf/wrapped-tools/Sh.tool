@name Sh
@wrapped run_command
