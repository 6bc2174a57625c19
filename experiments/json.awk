# json.awk — flatten JSON into "path<TAB>value" lines, one per scalar.
# Paths join object keys and array indices (0-based) with dots:
#   {"a": {"b": [1, {"c": "x"}]}}  ->  a.b.0<TAB>1  and  a.b.1.c<TAB>x
# Strings are unescaped for \" \\ \/ \n \t (others kept as written); null,
# true and false are printed as written. POSIX awk (works with mawk).
# Usage: awk -f experiments/json.awk FILE.json
{ buf = buf $0 "\n" }
END {
    n = length(buf); i = 1; depth = 0
    while (i <= n) {
        c = substr(buf, i, 1)
        if (c == "{" || c == "[") {
            depth++; kind[depth] = c; idx[depth] = 0; key[depth] = ""; havekey[depth] = 0
            i++; continue
        }
        if (c == "}" || c == "]") { depth--; i++; continue }
        if (c == ",") { if (kind[depth] == "[") idx[depth]++; havekey[depth] = 0; i++; continue }
        if (c == ":") { i++; continue }
        if (c == " " || c == "\t" || c == "\n" || c == "\r") { i++; continue }
        if (c == "\"") {
            s = ""; i++
            while (i <= n) {
                c = substr(buf, i, 1)
                if (c == "\\") {
                    d = substr(buf, i + 1, 1)
                    if (d == "n") s = s "\n"; else if (d == "t") s = s "\t"
                    else if (d == "\"" || d == "\\" || d == "/") s = s d
                    else s = s "\\" d
                    i += 2; continue
                }
                if (c == "\"") { i++; break }
                s = s c; i++
            }
            if (kind[depth] == "{" && !havekey[depth]) { key[depth] = s; havekey[depth] = 1; continue }
            emit(s); continue
        }
        # number or literal
        j = i
        while (j <= n && index(",}] \t\n\r", substr(buf, j, 1)) == 0) j++
        emit(substr(buf, i, j - i)); i = j
    }
}
function emit(v,   p, k) {
    p = ""
    for (k = 1; k <= depth; k++) {
        if (kind[k] == "{") p = p (p == "" ? "" : ".") key[k]
        else p = p (p == "" ? "" : ".") idx[k]
    }
    gsub(/\n/, " ", v)
    print p "\t" v
}
