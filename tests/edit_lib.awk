# edit_lib.awk: what the trace-edit scripts share (layouts_edit.awk,
# zombie_edit.awk, reuse_edit.awk, mixed_edit.awk; run with -f edit_lib.awk
# first): records written renumbered in order, records made up, a handle
# read from a line.
function out(line) {
	sub(/^\{call: [0-9]+,/, "{call: " no++ ",", line)
	print line
}
function rec(fn, args, ret) {
	out("{call: 0, thread: 0, fn: " fn ", args: {" args "}" (ret ? ", ret: VK_SUCCESS" : "") "}")
}
function handle(line, field,    v) {
	v = line; sub(".*" field ": \\[?", "", v); sub(/[],}].*/, "", v)
	return v
}
