"""What the files of a project say about each other.

A training step often spans files: `train.py` builds `compute_loss = ComputeLoss(model)` from
`utils/loss.py`, `engine.py` calls a loss function of `util/misc.py`. This package answers, for the file
being linted, which file of the project an import names (`torchlint.project.imports`: a relative import, a
package of the project, a script importing the module next to it) and what that file defines
(`torchlint.project.files`, read with LibCST on demand and only as far as a fact needs it). Code in
installed packages is never read: a module that is not a file of the project is unknown.

Today the facts follow one thing across files: the loss a function or a loss object of another file
returns (`training.origin`). A file's cache entry records the files of the project its facts read
(`ProjectFiles.used`, stamped by `imports.file_stamps`): a change there re-lints it.
"""
