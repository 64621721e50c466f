Broken.

@title Broken
@name broken-tool
@wrapped run_command
@comand ls {arguments}
