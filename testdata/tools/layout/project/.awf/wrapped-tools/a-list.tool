List files.

@title List
@name list
@wrapped run_command
@command ls {arguments}
@param arguments {array<string>} [required] Arguments for ls
