#!/bin/sh
# Answers with the length of its prompt argument and whatever came on standard input.
stdin=$(cat)
printf 'arg=%s stdin=%s' "$1" "$stdin"
