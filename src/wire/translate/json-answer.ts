// A `json_object` answer from a Messages upstream. The Messages API has no free-form JSON mode:
// its structured output needs a schema whose objects are closed (`{"type":"object"}` alone is
// refused, and closed it allows only `{}`). A forced tool whose input is any object gives the
// same guarantee, so a request that asks for json_object and has no tools of its own is sent with
// this one tool forced, and the tool call in the answer is read back as the answer's text.

/** The tool's name: reserved, so a call of it in an answer is always this answer. */
export const JSON_ANSWER_TOOL = "modelgate_json_answer";

/** The tool definition and forced choice added to the Messages request. */
export function jsonAnswerFields(): { tools: object[]; tool_choice: object } {
  return {
    tools: [
      {
        name: JSON_ANSWER_TOOL,
        description: "Give your whole answer as one JSON object: the input of this tool is the answer.",
        input_schema: { type: "object" },
      },
    ],
    tool_choice: { type: "tool", name: JSON_ANSWER_TOOL },
  };
}
