// The browser side of the approval flow: ask, show each call waiting for approval with its arguments, and send the
// decision; the server resumes the loop from the state it stored.
const form = document.querySelector('#ask');
const pendingView = document.querySelector('#pending');
const answer = document.querySelector('#answer');
const error = document.querySelector('#error');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const question = document.querySelector('#question').value.trim();
  if (question) await show(post('/agent/ask', { question }));
});

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error ?? `HTTP ${response.status}`);
  return json;
}

async function show(request) {
  error.textContent = '';
  try {
    const result = await request;
    pendingView.replaceChildren();
    if (result.status === 'awaiting_approval') {
      for (const call of result.pending) ask(result.token, call);
      return;
    }
    answer.textContent = result.text;
  } catch (failure) {
    error.textContent = String(failure.message ?? failure);
  }
}

/** One call waiting for a person: its name and arguments, Approve and Deny. */
function ask(token, call) {
  const card = document.createElement('div');
  card.className = 'call';
  card.dataset.id = call.id;
  const title = document.createElement('div');
  title.textContent = `The agent wants to call ${call.name}`;
  const args = document.createElement('div');
  args.className = 'args';
  args.textContent = JSON.stringify(call.args);
  const decide = (label, decision) => {
    const button = document.createElement('button');
    button.textContent = label;
    button.addEventListener('click', () => show(post('/agent/decide', { token, approvals: { [call.id]: decision } })));
    return button;
  };
  card.append(title, args, decide('Approve', true), decide('Deny', { deny: 'The person declined.' }));
  pendingView.append(card);
}
