List directory contents using ls. The working directory is the project directory by default. Pass ls's options and the paths to list as separate strings. Common usage: ["-la"] for a long listing of the working directory including hidden files, ["-1", "src/"] for one name per line, or ["-R", "docs"] to list docs recursively.

@title List Directory Contents
@name ls
@wrapped run_command
@command ls {arguments}
@param arguments {array<string>} [required] Array of strings that will be passed to ls: options, then paths
