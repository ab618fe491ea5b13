// Command supervisor is the hostile suite's supervisor program: backend/proc's
// init hook and nothing else, built once per run of the suite without -race
// and handed to proc.UseSupervisorProgram (tests/hostile TestMain). Without
// it every confined command re-executes the suite's own test binary, race
// instrumented and linking the whole application, as its supervisor: about a
// second per command on a loaded 2-core machine, and the secret cases run
// some 80 approved commands one after another.
package main

import _ "agenthub/backend/proc" // its init runs the supervisor when asked

func main() {}
