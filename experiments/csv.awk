# csv.awk — CSV helpers for awk programs of the experiments (POSIX awk, mawk).
#
# Prepended to a program by `csvq` (experiments/lib.sh). Every file's first
# line is its header; for the other lines FLD_[1..NF_] hold the fields (RFC 4180
# quoting: "a,b" and "" inside quotes) and v("name") the field of column
# `name` (empty when the file has no such column). has("name") says whether
# the current file has the column.
function csvsplit(line, arr,    n, i, c, f, q) {
    n = 0; f = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (q) {
            if (c == "\"") {
                if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ }
                else q = 0
            } else f = f c
        } else if (c == "\"") q = 1
        else if (c == ",") { arr[++n] = f; f = "" }
        else if (c != "\r") f = f c
    }
    arr[++n] = f
    return n
}
function v(name) { return (name in COL_) ? FLD_[COL_[name]] : "" }
function has(name) { return (name in COL_) }
# number or empty -> number printed with fmt; empty/null/nan -> dash
function fmt(x, f) { return (x == "" || x == "null" || x == "nan" || x == "-nan") ? "-" : sprintf(f, x + 0) }
function isnum(x) { return x != "" && x != "null" && x !~ /nan/ && x ~ /^[-+0-9.eE]+$/ }
FNR == 1 {
    for (k_ in COL_) delete COL_[k_]
    NH_ = csvsplit($0, HDR_)
    for (k_ = 1; k_ <= NH_; k_++) COL_[HDR_[k_]] = k_
    next
}
{ NF_ = csvsplit($0, FLD_) }
