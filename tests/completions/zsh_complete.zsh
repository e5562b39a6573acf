# zsh_complete.zsh DIR LINE: what zsh's completion system offers for the
# command line LINE (a TAB typed at its end), with the functions of DIR
# first on fpath; each match printed as <<MATCH>>, between two lines
# @@MARK@@.  Completion needs the line editor, so an interactive zsh runs
# in a pseudo-terminal (zsh/zpty); compadd is wrapped to print what the
# completion function adds (as github.com/Valodim/zsh-capture-completion
# does), and the shell exits after the first completion.
# Run as: zsh -f tests/completions/zsh_complete.zsh DIR 'oomdoc --for'
zmodload zsh/zpty || exit 2
dir=$1
shift
zpty z zsh -f -i
zpty -w z "PROMPT= RPROMPT= PS2=; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w z "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
  typeset -a __hits; builtin compadd -A __hits "$@"
  (( $#__hits )) && print -lr -- "<<${^__hits}>>"
}'
# The marks are made when the functions run, so that the echo of these
# lines does not hold them.
zpty -w z 'mark() { print -r -- "@@${:-MARK}@@" }; compprefuncs=(mark); comppostfuncs=(mark exit)'
zpty -w z 'bindkey "^I" complete-word'
zpty -w z "$*"$'\t'
zpty -r z out '*@@MARK@@*' || exit 1
print -r -- @@MARK@@
while zpty -r z line; do
	print -r -- "${line%$'\r\n'}"
	[[ $line == *@@MARK@@* ]] && break
done
zpty -d z
