"""What the files of a project say about each other.

A training step often spans files: `train.py` builds `compute_loss = ComputeLoss(model)` from
`utils/loss.py`, `engine.py` calls a loss function of `util/misc.py`. This package answers, for the file
being linted, which file of the project an import names (`torchlint.project.imports`: a relative import, a
package of the project, a script importing the module next to it) and what that file defines
(`torchlint.project.files`, read with LibCST on demand and only as far as a fact needs it). Code in
installed packages is never read: a module that is not a file of the project is unknown.

The facts follow two things across files: the loss a function or a loss object of another file returns
(`training.origin`), and the backward, step and reset that a function of another file, or the method of an
object of a project class, runs when a loop calls it (`training.calls.Functions.remote`: `engine.py`'s
`loss_scaler(loss, optimizer, update_grad=...)` runs the `__call__` of `util/misc.py`, `updater.backward_step(loss,
update=...)` that method of its class). What such an object
is, when it arrives as a parameter, is read from every call of the loop's function in the project, and
whether a file without a backward of its own is worth analysing at all, from an index built with the
standard library (`torchlint.project.index`). A file's cache entry records the files of the project its
facts read (`ProjectFiles.used`, stamped by `imports.file_stamps`): a change there re-lints it. The language
server lints again the open documents whose last lint read a file that changed, and has the project read
the open documents' unsaved text in place of the disk's (`index.set_open_text`, `index.file_changed`).
"""
