@name Read
@wrapped read_file
