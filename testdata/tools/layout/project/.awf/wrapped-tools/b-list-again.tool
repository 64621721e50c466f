@name list
@wrapped shell
