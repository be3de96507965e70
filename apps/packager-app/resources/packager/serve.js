// Every step of packager.workflow.json runs this: the agent reads the request for the step's
// data.packagerOperation on the host, runs the packager operation and sends its answer.
context.packager();
