"""The service layer: what the CLI's commands and the GUI both call (Qt-free).

``designer.commands`` parse arguments and print; ``designer.gui`` draws and asks; both reach the
engine and the domain model through these modules when the same work is done for both:

- :mod:`designer.services.workloads`: the workload a catalog preset gets on a design (its layout
  fitted so that the published global batch divides), and the layout refitted when the batch changes.
- :mod:`designer.services.planning`: the layout search with its refit and its words.
- :mod:`designer.services.style`: colours and labels of scenarios and breakdown parts (GUI and report).
"""
