import { createInterface } from 'node:readline';

// A yes/no question on the terminal, for commands that change things for good
// (`monitor-backend upgrade`). Only `y` or `yes` is a yes; anything else, or the end of the input
// (Ctrl-D), is a no, so nothing is done by accident.

export function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  return new Promise((resolve) => {
    let answered = false;
    rl.on('close', () => {
      if (!answered) process.stdout.write('\n');
      resolve(false);
    });
    rl.question(question, (answer) => {
      answered = true;
      resolve(/^y(es)?$/i.test(answer.trim()));
      rl.close();
    });
  });
}
