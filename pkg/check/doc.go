// Package check is the one definition of a check, shared by the control plane and the agent:
// kinds, regions, assertions, the configuration model (Spec, with one file per kind: http.go,
// dns.go, tcp.go, each holding the kind's fields, defaults, example and rules), validation, and
// the wire forms derived from the model.
//
// Every other form of a check is derived from the model in one place:
//   - the REST body: a field's `json` tag is its API name; the API decodes and renders the
//     kinds' fields by walking the model (an `api:"required"` tag makes a create body give it);
//   - the stored document: Document and LoadDocument (document.go), the canonical encoding of the
//     kind's configuration, kept in the checks.spec column;
//   - the job an agent runs: Job and FromJob (job.go), the one mapping onto protobuf, whose
//     decoded form the probers take as their input.
//
// A field tagged `job:"-"` stays in the control plane (scheduling and alerting); every other
// field travels in the job. Tests walk every field of Example through every form.
package check
